"""The link checker finds what it must (a missing file, a missing heading, a missing mention) and the
project's own documents have no broken link."""
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_links  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]


class CheckLinks(unittest.TestCase):
    def test_a_missing_file_heading_or_mention_is_reported(self):
        with tempfile.TemporaryDirectory() as d:
            root = pathlib.Path(d)
            (root / "docs").mkdir()
            (root / "docs" / "a.md").write_text("# Alpha beta\n\ntext\n")
            (root / "README.md").write_text(
                "[ok](docs/a.md) [ok](docs/a.md#alpha-beta) [bad](docs/gone.md) [bad](docs/a.md#nothing)\n"
                "see docs/missing.md and [web](https://example.org/x)\n```\ndocs/in-code.md\n```\n")
            problems = check_links.broken_links(root)
            self.assertEqual(len(problems), 3, problems)
            self.assertTrue(any("docs/gone.md" in p for p in problems))
            self.assertTrue(any("#nothing" in p for p in problems))
            self.assertTrue(any("docs/missing.md" in p for p in problems))

    def test_the_projects_documents_have_no_broken_link(self):
        self.assertEqual(check_links.broken_links(REPO), [])


if __name__ == "__main__":
    unittest.main()
