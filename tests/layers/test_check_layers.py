"""The layer checker (tools/check_layers.py) on tiny trees: it passes a tree that keeps the order and fails
one with an include that runs upward, an include of a module that is not linked, or an upward link."""
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import check_layers  # noqa: E402


def tree(root, files):
    for name, text in files.items():
        path = root / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "src"


class CheckLayers(unittest.TestCase):
    ORDER = ["core", "hw", "report"]
    USES = {"core": set(), "hw": {"core"}, "report": {"core", "hw"}}
    GOOD = {
        "core/error.hpp": "#pragma once\n#include <string>\n",
        "hw/gpu.hpp": '#pragma once\n#include "core/error.hpp"\n#include "hw/gpu_detail.hpp"\n',
        "hw/gpu_detail.hpp": "#pragma once\n",
        "report/table.cpp": '#include "report/table.hpp"\n#include "hw/gpu.hpp"\n#include "core/error.hpp"\n'
                            '#include "wattwise/markers.h"\n#include <nlohmann/json.hpp>\n',
    }

    def check(self, files, uses=None):
        with tempfile.TemporaryDirectory() as d:
            src = tree(pathlib.Path(d), files)
            return check_layers.breaks(self.ORDER, uses or self.USES, src)

    def test_a_tree_that_keeps_the_order_passes(self):
        self.assertEqual(self.check(self.GOOD), [])

    def test_an_upward_include_fails_naming_the_file_and_line(self):
        files = dict(self.GOOD)
        files["hw/nvml.cpp"] = '#include "hw/gpu.hpp"\n\n  #  include "report/table.hpp"\n'
        problems = self.check(files)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("src/hw/nvml.cpp:3: hw includes report/table.hpp", problems[0])
        self.assertIn("above it in the layers", problems[0])

    def test_an_include_of_a_lower_module_not_linked_fails(self):
        uses = {"core": set(), "hw": {"core"}, "report": {"hw"}}
        problems = self.check(self.GOOD, uses)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("report includes core/error.hpp", problems[0])
        self.assertIn("src/report/CMakeLists.txt does not link it", problems[0])

    def test_an_upward_link_fails(self):
        uses = dict(self.USES, hw={"core", "report"})
        problems = self.check(self.GOOD, uses)
        self.assertEqual(problems, [problems[0]])
        self.assertIn("src/hw: links report, which sits above it", problems[0])

    def test_the_command_line_exits_1_on_a_break_and_0_without(self):
        with tempfile.TemporaryDirectory() as d:
            root = pathlib.Path(d)
            files = dict(self.GOOD)
            src = tree(root, files)
            layers = root / "layers.txt"
            layers.write_text("order: core hw report\ncore: \nhw: core\nreport: core hw\n")
            self.assertEqual(check_layers.main(["check_layers.py", str(layers), str(src)]), 0)
            (src / "core" / "clock.cpp").write_text('#include "hw/gpu.hpp"\n')
            self.assertEqual(check_layers.main(["check_layers.py", str(layers), str(src)]), 1)


if __name__ == "__main__":
    unittest.main()
