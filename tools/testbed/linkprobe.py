"""TCP throughput between two testbed hosts, to record what a shaped link
really carries: `linkprobe.py serve PORT` counts the bytes of one connection
and prints {"bytes", "seconds"} as JSON; `linkprobe.py send HOST PORT SECONDS`
sends as fast as it can for that long."""

import json
import socket
import sys
import time


def serve(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(1)
    s.settimeout(30)
    conn, _ = s.accept()
    total = 0
    start = None
    while True:
        chunk = conn.recv(1 << 20)
        if not chunk:
            break
        if start is None:
            start = time.perf_counter()
        total += len(chunk)
    seconds = time.perf_counter() - (start or time.perf_counter())
    print(json.dumps({"bytes": total, "seconds": seconds}))


def send(host, port, seconds):
    for _ in range(100):  # the server may not be listening yet
        try:
            c = socket.create_connection((host, port), timeout=5)
            break
        except OSError:
            time.sleep(0.05)
    else:
        raise SystemExit(f"linkprobe: cannot connect to {host}:{port}")
    buf = b"\0" * (1 << 20)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        c.sendall(buf)
    c.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(int(sys.argv[2]))
    elif sys.argv[1:2] == ["send"]:
        send(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        raise SystemExit(__doc__)
