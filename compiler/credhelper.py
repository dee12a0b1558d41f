"""git-credential-ringfence: the in-sandbox end of the per-run credential broker.

Runs INSIDE the sandbox as git's credential helper (``credential.helper`` is set
to it through ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_0``), or by hand for other
tools::

    printf 'protocol=https\\nhost=api.github.com\\n\\n' | git-credential-ringfence get

bwrap places it read-only at ``/run/ringfence/git-credential-ringfence`` from a
memfd, with the broker's descriptor number written into ``FD`` below. It asks
ringfence ON THE HOST over that inherited descriptor (a SOCK_SEQPACKET socket;
never a path anything in the sandbox could open): it makes a pipe, sends the
request with the pipe's write end attached (SCM_RIGHTS), closes its copy and reads
the answer from the read end, so concurrent helpers never read each other's
answers. The broker decides (a request for one of the credential's domains, over
https, while the run lives) and records every request in the ledger.

``get`` prints ``username=``/``password=`` lines for git; ``store`` and ``erase``
do nothing (the host's credential is never changed from inside). Exit 0 with no
output when the broker has nothing for this request: git then tries its next
helper or asks, as for any helper that knows nothing. Stdlib only, run with -I -S.
"""

import os
import socket
import sys

FD = -1    # replaced by the broker with the inherited descriptor's number
MAX = 64 * 1024


def main(argv):
    if len(argv) < 2 or argv[1] != "get":
        return 0
    request = sys.stdin.buffer.read(MAX)
    r, w = os.pipe()
    try:
        sock = socket.socket(fileno=os.dup(FD))
    except OSError as exc:
        sys.stderr.write(f"git-credential-ringfence: no broker in this run ({exc.strerror})\n")
        return 0
    try:
        socket.send_fds(sock, [request], [w])
    except OSError as exc:
        sys.stderr.write(f"git-credential-ringfence: the broker is gone ({exc.strerror})\n")
        return 0
    finally:
        os.close(w)
        sock.close()
    chunks = []
    while True:
        data = os.read(r, MAX)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    sys.stdout.buffer.write(b"".join(chunks))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
