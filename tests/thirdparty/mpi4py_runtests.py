"""Runs mpi4py's test/runtests.py in a rank (tests/thirdparty/mpi4py):

    python3 mpi4py_runtests.py MPI4PY_PATH TEST_DIR [runtests.py args]

One adjustment, said in the output as a skip with its reason: when the
processes of MPI_COMM_WORLD cannot all share memory (a job split over
clusters: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives a smaller
communicator), mpi4py's TestWinAllocateSharedWorld is skipped.  It calls
MPI_Win_allocate_shared on MPI_COMM_WORLD, which the standard answers with
MPI_ERR_RMA_SHARED there ("memory cannot be shared"), as any MPI does over
several nodes; mpi4py's own CI runs on one node only.
"""
import os
import runpy
import sys
import unittest

path, testdir = sys.argv[1], sys.argv[2]
sys.path[:0] = [path, testdir]
from mpi4py import MPI  # noqa: E402

world = MPI.COMM_WORLD
node = world.Split_type(MPI.COMM_TYPE_SHARED)
if node.Get_size() < world.Get_size():
    import test_win  # noqa: E402  (runtests imports it again: the same module)
    unittest.skip("MPI_COMM_WORLD spans clusters: no shared memory (MPI_ERR_RMA_SHARED)")(
        test_win.TestWinAllocateSharedWorld)
node.Free()
runtests = os.path.join(testdir, "runtests.py")
sys.argv = [runtests] + sys.argv[3:]
runpy.run_path(runtests, run_name="__main__")
