"""The command-line arguments every testbed worker (train.py, sweep.py)
takes from the launcher: which rank it is, where rank 0 listens, how long to
wait for the others, where to write."""


def add_worker_arguments(parser):
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--master", required=True, help="rank 0's address")
    parser.add_argument("--port", type=int, required=True, help="rank 0's port")
    parser.add_argument("--timeout-s", type=float, default=300.0, help="gloo's timeout")
    parser.add_argument("--out", required=True, help="folder for the results")


def check_worker_arguments(parser, a):
    if not 0 <= a.rank < a.world:
        parser.error(f"--rank {a.rank}: expected 0 to {a.world - 1}")
