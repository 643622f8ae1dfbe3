// TEMPORARY stub so that the tree links while the control client is written.
#include "launcher/control_client.hpp"
namespace gridmpi::launcher {
std::unique_ptr<ControlClient> ControlClient::from_environment() { return nullptr; }
}
