"""signal_after.py SIGNAL PREFIX -- COMMAND...: runs COMMAND with its standard
output through a pipe, copies that output, and sends SIGNAL (TERM, USR1, ...)
to COMMAND's process once a line starting with PREFIX has appeared, as a
scheduler does before it preempts a job. Prints 'exit status N' last; exits
0 (1 when PREFIX never appeared)."""
import signal
import subprocess
import sys

name, prefix = sys.argv[1], sys.argv[2]
command = sys.argv[sys.argv.index("--") + 1:]
child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
sent = False
for line in child.stdout:
    sys.stdout.write(line)
    sys.stdout.flush()
    if not sent and line.startswith(prefix):
        child.send_signal(getattr(signal, "SIG" + name))
        sent = True
status = child.wait()
print("exit status %d" % status)
sys.exit(0 if sent else 1)
