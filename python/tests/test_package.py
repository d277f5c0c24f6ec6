"""The Python package: installed with pip into a fresh environment (offline), imported there without
PYTHONPATH, at the C++ project's version."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPOSITORY = os.path.dirname(PYTHON_DIR)
sys.path.insert(0, PYTHON_DIR)

import wattwise  # noqa: E402

# Building a wheel offline needs setuptools and, before setuptools 70.1, the wheel package (Debian:
# python3-setuptools, python3-wheel, python3-pip). The interpreter running the tests may lack them (a pyenv
# build); Debian's own python3 is tried next. setuptools is imported before pip: Debian's setuptools asserts
# when pip has loaded the standard library's distutils first.
CAN_BUILD = ("import setuptools, pip\n"
             "major, minor = (int(x) for x in setuptools.__version__.split('.')[:2])\n"
             "if (major, minor) < (70, 1):\n"
             "    import wheel\n")


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
            self.skipTest("pip install ./python needs pip, setuptools and wheel: apt-get install python3-pip "
                          "python3-setuptools python3-wheel (none found for %s or /usr/bin/python3)" % sys.executable)
        self.directory = tempfile.TemporaryDirectory(prefix="ww-pip-")
        self.addCleanup(self.directory.cleanup)

    def run_checked(self, command, **kwargs):
        result = subprocess.run(command, env=environment_without_pythonpath(), capture_output=True, text=True,
                                **kwargs)
        self.assertEqual(result.returncode, 0, "%s\n%s%s" % (" ".join(command), result.stdout, result.stderr))
        return result.stdout

    def test_pip_install_offline_then_import_without_pythonpath(self):
        # A copy, since setuptools builds in the source tree (build/, *.egg-info) and the checkout stays clean.
        source = os.path.join(self.directory.name, "python")
        shutil.copytree(PYTHON_DIR, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info",
                                                                          "__pycache__"))
        venv = os.path.join(self.directory.name, "venv")
        # --system-site-packages lends the venv this interpreter's pip and setuptools, so nothing is downloaded.
        self.run_checked([self.python, "-m", "venv", "--without-pip", "--system-site-packages", venv])
        venv_python = os.path.join(venv, "bin", "python")
        self.run_checked([venv_python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--no-index", source])
        code = ("import wattwise, wattwise.callbacks; print(wattwise.__file__); print(wattwise.__version__); "
                "import importlib.metadata as m; print(m.version('wattwise'))")
        lines = self.run_checked([venv_python, "-c", code], cwd=self.directory.name).splitlines()
        self.assertTrue(lines[0].startswith(os.path.realpath(venv)) or lines[0].startswith(venv), lines[0])
        self.assertEqual(lines[1:], [cmake_project_version()] * 2)


if __name__ == "__main__":
    unittest.main()
