"""What the Python test drivers share about their temp dirs."""
import os
import shutil
import subprocess


def rmtree(path):
    """Removes path, also what a sandbox made there under a subordinate uid (which only a
    user namespace mapping that range may delete, as tests/lib.sh's t_rmtree does)."""
    shutil.rmtree(path, ignore_errors=True)
    if os.path.exists(path):
        subprocess.run(["unshare", "--map-root-user", "--map-auto", "rm", "-rf", "--", path],
                       stderr=subprocess.DEVNULL)
