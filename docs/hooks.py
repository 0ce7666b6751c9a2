"""MkDocs hook: the spec reference page is generated from the models' JSON Schema at every build."""

from fairstream.language.reference import reference_markdown

PLACEHOLDER = "<!-- the spec reference, generated -->"


def on_page_markdown(markdown: str, page, **_: object) -> str:
    if page.file.src_path == "spec-reference.md":
        return markdown.replace(PLACEHOLDER, reference_markdown())
    return markdown
