"""Starts a command as the tasks of a Slurm job step, as srun would.

fake_srun.py [--hosts PREFIX N] [--rank-zero-late S] NTASKS COMMAND...

Each task is COMMAND with Slurm's variables set (SLURM_PROCID, SLURM_NTASKS,
SLURM_LOCALID, SLURM_NODEID, SLURM_JOB_ID, SLURM_STEP_ID), and the word
{rendezvous} in COMMAND replaced by HOST:PORT, a free port on the host of
task 0. The tasks fill the hosts in order, NTASKS / N each.

Without --hosts every task runs here, on the loopback, and the port stays
reserved (bound, not listening, with SO_REUSEADDR as rank 0 binds it) until
the tasks end, so no other process takes it meanwhile. With --hosts, the
hosts are network namespaces PREFIX0 ... PREFIX<N-1> that this script
makes with `scripts/hosts.sh up N --name PREFIX` and removes at the end,
whatever happened; each task runs in its host through `hosts.sh agent` (a
hostname of its own), and the rendezvous address is host 0's on its link
to host 1: tasks on different hosts reach each other only over those
links, as on a cluster. --rank-zero-late S
starts task 0 S seconds after the others, since srun starts the tasks in
no set order.

The tasks' output goes to this process's stdout and stderr (lines may
interleave, as srun's do). The status is the lowest failed task's (a
signal as 128 + its number), 0 when all succeeded. No task runs longer
than 300 s; on SIGTERM the tasks are ended too.
"""

import os
import signal
import socket
import subprocess
import sys
import time

HOSTS_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "..", "..", "..", "scripts", "hosts.sh")


def reserve_port():
    """A free loopback port and the socket that holds it."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1], s


def hosts_sh(*args, **kwargs):
    return subprocess.run([HOSTS_SH, *args], check=True, **kwargs)


def main(argv):
    prefix, hosts, late = None, 1, 0.0
    while argv and argv[0].startswith("--"):
        if argv[0] == "--hosts":
            prefix, hosts = argv[1], int(argv[2])
            argv = argv[3:]
        elif argv[0] == "--rank-zero-late":
            late = float(argv[1])
            argv = argv[2:]
        else:
            sys.exit("fake_srun.py: unknown option " + argv[0])
    tasks, command = int(argv[0]), argv[1:]
    if tasks % hosts:
        sys.exit("fake_srun.py: %d tasks do not fill %d hosts" % (tasks, hosts))
    per_host = tasks // hosts
    if prefix:
        hosts_sh("up", str(hosts), "--name", prefix)
        try:
            return run(tasks, per_host, command, prefix, late)
        finally:
            hosts_sh("down", "--name", prefix)
    port, reservation = reserve_port()
    with reservation:
        return run(tasks, per_host, command, None, late,
                   "127.0.0.1:%d" % port)


def run(tasks, per_host, command, prefix, late, rendezvous=None):
    if prefix:
        address = hosts_sh("addr", "0", "1", "--name", prefix,
                           capture_output=True, text=True).stdout.strip()
        # In namespaces of their own no other process holds the port.
        rendezvous = address + ":29500"
    words = [w.replace("{rendezvous}", rendezvous) for w in command]

    def wrap(host):
        if not prefix:
            return words
        return [HOSTS_SH, "agent", prefix + str(host)] + words

    job = str(os.getpid())
    order = list(range(1, tasks)) + [0] if late else range(tasks)
    procs = RUNNING
    for rank in order:
        if rank == 0 and late:
            time.sleep(late)
        host = rank // per_host
        env = dict(os.environ, SLURM_PROCID=str(rank),
                   SLURM_NTASKS=str(tasks),
                   SLURM_LOCALID=str(rank % per_host),
                   SLURM_NODEID=str(host), SLURM_JOB_ID=job,
                   SLURM_STEP_ID="0")
        procs[rank] = subprocess.Popen(["timeout", "300"] + wrap(host),
                                       env=env)
    status = 0
    for rank in range(tasks):
        code = procs[rank].wait()
        code = 128 - code if code < 0 else code
        if code and not status:
            status = code
    return status


# The tasks started so far, by rank.
RUNNING = {}


def terminate(*_):
    for proc in RUNNING.values():
        if proc.poll() is None:
            proc.terminate()
    sys.exit(143)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, terminate)
    sys.exit(main(sys.argv[1:]))
