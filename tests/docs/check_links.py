#!/usr/bin/env python3
"""Every link between the project's documents leads somewhere: markdown links [text](target) to files in
the repository (and #anchors to headings that exist), and the plain `docs/NAME.md` mentions the README and
the docs use. Links to the web are not fetched (CI has no network); they must at least be well-formed.
Usage: check_links.py REPO_ROOT. Prints every broken link; exit 1 when there is one."""
import pathlib
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MENTION = re.compile(r"(?<![\w/.-])((?:docs|python|tools|bench|include|tests)/[\w./-]+\.(?:md|py|sh|hpp|h|cpp|toml))(?![\w.])")
HEADING = re.compile(r"^#+\s+(.*)$", re.M)


def anchor_of(heading):
    # GitHub's rule: lower case, spaces to '-', punctuation other than '-' and '_' dropped.
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    return {anchor_of(h) for h in HEADING.findall(path.read_text(encoding="utf-8"))}


def broken_links(root):
    documents = [root / "README.md"] + sorted((root / "docs").glob("*.md")) + [root / "python" / "README.md"]
    problems = []
    for doc in documents:
        if not doc.exists():
            continue
        text = doc.read_text(encoding="utf-8")
        # Code blocks show commands, not links.
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in LINK.findall(prose):
            if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
                continue
            file_part, _, anchor = target.partition("#")
            linked = doc if not file_part else (doc.parent / file_part)
            if not linked.exists():
                problems.append(f"{doc.relative_to(root)}: link to {target}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{doc.relative_to(root)}: link to {target}: no heading '#{anchor}'")
        for mention in MENTION.findall(LINK.sub("", prose)):
            mention = mention.rstrip(".")
            if not (root / mention).exists():
                problems.append(f"{doc.relative_to(root)}: mentions {mention}: no such file")
    return problems


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    problems = broken_links(root)
    for p in problems:
        print(p)
    print(f"check_links: {len(problems)} broken link(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
