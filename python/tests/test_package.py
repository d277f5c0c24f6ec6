"""The Python package: installed with pip into a fresh environment (offline), imported there without
PYTHONPATH, at the C++ project's version."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPOSITORY = os.path.dirname(PYTHON_DIR)
sys.path.insert(0, PYTHON_DIR)

import wattwise  # noqa: E402

# `pip install ./python` needs only pip: the build backend is in the tree (python/_build_backend.py) and
# needs nothing from an index. The interpreter running the tests may lack pip (a pyenv build); Debian's own
# python3 is tried next.
CAN_BUILD = "import pip\n"


def environment_without_pythonpath():
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}


def interpreter_that_can_build():
    for candidate in (sys.executable, "/usr/bin/python3"):
        if candidate and os.path.exists(candidate):
            probe = subprocess.run([candidate, "-c", CAN_BUILD], env=environment_without_pythonpath(),
                                   capture_output=True)
            if probe.returncode == 0:
                return candidate
    return None


def cmake_project_version():
    with open(os.path.join(REPOSITORY, "CMakeLists.txt"), encoding="utf-8") as cmake:
        match = re.search(r"project\(\s*wattwise\s+VERSION\s+([0-9.]+)", cmake.read())
    return match.group(1) if match else None


class Version(unittest.TestCase):
    def test_the_package_version_is_the_cmake_project_version(self):
        self.assertIsNotNone(cmake_project_version())
        self.assertEqual(wattwise.__version__, cmake_project_version())


class PipInstall(unittest.TestCase):
    def setUp(self):
        self.python = interpreter_that_can_build()
        if self.python is None:
            self.skipTest("pip install ./python needs pip: apt-get install python3-pip (none found for %s or "
                          "/usr/bin/python3)" % sys.executable)
        self.directory = tempfile.TemporaryDirectory(prefix="ww-pip-")
        self.addCleanup(self.directory.cleanup)

    def run_checked(self, command, **kwargs):
        result = subprocess.run(command, env=environment_without_pythonpath(), capture_output=True, text=True,
                                **kwargs)
        self.assertEqual(result.returncode, 0, "%s\n%s%s" % (" ".join(command), result.stdout, result.stderr))
        return result.stdout

    def tree(self):
        listing = set()
        for directory, subdirectories, names in os.walk(PYTHON_DIR):
            subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
            listing.update(os.path.join(directory, name) for name in names + subdirectories)
        return listing

    # As docs/install.md writes it: `pip install ./python`, with pip's build isolation and no index (offline).
    # Failed before: the isolated build fetched setuptools, and setuptools left build/ and an egg-info here.
    def test_pip_install_offline_then_import_without_pythonpath(self):
        before = self.tree()
        venv = os.path.join(self.directory.name, "venv")
        # --system-site-packages lends the venv this interpreter's pip, so nothing is downloaded.
        self.run_checked([self.python, "-m", "venv", "--without-pip", "--system-site-packages", venv])
        venv_python = os.path.join(venv, "bin", "python")
        self.run_checked([venv_python, "-m", "pip", "install", "--quiet", "--no-index", "./python"],
                         cwd=REPOSITORY)
        self.assertEqual(self.tree() - before, set(), "pip install wrote into the source tree")
        code = ("import wattwise, wattwise.callbacks; print(wattwise.__file__); print(wattwise.__version__); "
                "import importlib.metadata as m; print(m.version('wattwise')); "
                "print(sorted(m.metadata('wattwise').get_all('Provides-Extra')))")
        lines = self.run_checked([venv_python, "-c", code], cwd=self.directory.name).splitlines()
        self.assertTrue(lines[0].startswith(os.path.realpath(venv)) or lines[0].startswith(venv), lines[0])
        self.assertEqual(lines[1:3], [cmake_project_version()] * 2)
        self.assertEqual(lines[3], str(["huggingface", "keras", "lightning", "torch"]))


if __name__ == "__main__":
    unittest.main()
