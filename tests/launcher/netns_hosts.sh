# Sourced by bash scripts: two "hosts" on this machine, network namespaces
# $nsA (10.77.0.1) and $nsB (10.77.0.2) joined by a veth pair, with Debian's
# sshd in B on a private port, a host key and an authorized key made here
# (the system's ssh configuration is not touched; sshd's /run/sshd lives in
# a private mount namespace).  Before sourcing, define skip() and fail()
# (fail may print files of $work).  After netns_hosts_up:
#   $work  a private directory (removed at exit)
#   $nsA $nsB  the namespaces;  $rsh  the remote shell from A to B
# Everything, including any process left in either namespace, is removed
# at exit (the caller's EXIT trap must call netns_hosts_down).
netns_hosts_up() {
  [ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
  [ -x /usr/sbin/sshd ] || skip "openssh-server is not installed"
  command -v ip >/dev/null && command -v ssh >/dev/null && command -v ssh-keygen >/dev/null && command -v unshare >/dev/null ||
    skip "needs ip, ssh, ssh-keygen, unshare"
  local id=$$
  nsA=gmA$id
  nsB=gmB$id
  work=$(mktemp -d /tmp/gridmpi-two-hosts.XXXXXX)
  chmod 755 "$work"
  ip netns add "$nsA" 2>/dev/null || skip "cannot create network namespaces here"
  ip netns add "$nsB" || fail "ip netns add $nsB"
  ip link add "vA$id" type veth peer name "vB$id" || fail "cannot create a veth pair"
  ip link set "vA$id" netns "$nsA" && ip link set "vB$id" netns "$nsB" || fail "cannot move the veth ends"
  ip -n "$nsA" addr add 10.77.0.1/24 dev "vA$id"
  ip -n "$nsB" addr add 10.77.0.2/24 dev "vB$id"
  for ns in "$nsA" "$nsB"; do ip -n "$ns" link set lo up; done
  ip -n "$nsA" link set "vA$id" up
  ip -n "$nsB" link set "vB$id" up

  ssh-keygen -q -t ed25519 -N '' -f "$work/host_key" || fail "ssh-keygen"
  ssh-keygen -q -t ed25519 -N '' -f "$work/user_key" || fail "ssh-keygen"
  cp "$work/user_key.pub" "$work/authorized_keys"
  cat > "$work/sshd_config" <<EOC
Port 2222
ListenAddress 10.77.0.2
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PidFile $work/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
X11Forwarding no
PrintMotd no
MaxStartups 64:30:128
UseDNS no
MaxSessions 64
LogLevel VERBOSE
EOC
  ip netns exec "$nsB" unshare -m sh -c \
    "mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd && exec /usr/sbin/sshd -f '$work/sshd_config' -E '$work/sshd.log'" ||
    fail "sshd did not start: $(cat "$work/sshd.log" 2>/dev/null)"
  for i in $(seq 50); do
    ip netns exec "$nsA" bash -c 'exec 3<>/dev/tcp/10.77.0.2/2222' 2>/dev/null && break
    sleep 0.2
  done
  [ -f "$work/sshd.pid" ] || fail "sshd wrote no pid file: $(cat "$work/sshd.log" 2>/dev/null)"
  rsh="ssh -p 2222 -i $work/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o ConnectTimeout=5"
  ip netns exec "$nsA" $rsh 10.77.0.2 true || fail "plain ssh between the namespaces does not work"
}

netns_hosts_down() {
  [ -n "${work:-}" ] || return 0
  if [ -f "$work/sshd.pid" ]; then kill "$(cat "$work/sshd.pid")" 2>/dev/null; fi
  # Whatever still runs in the namespaces is ours (ranks, agents, sshd).
  local ns pid
  for ns in "${nsA:-}" "${nsB:-}"; do
    [ -n "$ns" ] || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  done
  [ -n "${nsA:-}" ] && ip netns del "$nsA" 2>/dev/null
  [ -n "${nsB:-}" ] && ip netns del "$nsB" 2>/dev/null
  rm -rf "$work"
}
