"""Generates src/dutil_client/_models.py from docs/openapi.yaml with datamodel-code-generator.

The API description keeps each utility's input inline in its route and marks optional values as
`anyOf: [X, null]`; before generating, this names the inputs (<Utility>Input) and the inline
objects (JobResult, ErrorBody, ...) and folds the nullable unions into `type: [X, "null"]`, so
the models read like hand-written ones. `--check` compares instead of writing (the drift test).
"""

from __future__ import annotations

import copy
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
OPENAPI = PACKAGE.parent.parent / "docs" / "openapi.yaml"
TARGET = PACKAGE / "src" / "dutil_client" / "_models.py"

# Names for inline objects: (schema name, property) -> class name.
INLINE_NAMES = {
    ("Job", "timings"): "JobTimings",
    ("Job", "progress"): "JobProgress",
    ("Job", "result"): "JobResult",
    ("Job", "error"): "JobError",
    ("Job", "callback"): "JobCallback",
    ("Job", "links"): "JobLinks",
    ("Error", "error"): "ErrorBody",
    ("ErrorBody", "details"): "ErrorDetail",
    ("HtmlPdfInput", "pdfOptions"): "PdfOptions",
    ("PdfOptions", "margin"): "PdfMargin",
    ("HtmlImageInput", "imageOptions"): "ImageOptions",
    ("ImageOptions", "clip"): "ImageClip",
    ("ZipFilesInput", "files"): "ZipFileEntry",
    ("MergePdfInput", "files"): "MergePdfSource",
    ("MergePdfInput", "info"): "Info",
    ("EditPdfInput", "rotate"): "PdfRotation",
    ("EditPdfInput", "stamp"): "PdfStamp",
    ("EditPdfInput", "info"): "DocumentInfo",
}

HEADER = """# Generated from docs/openapi.yaml by clients/python/scripts/generate.py. Do not edit by hand."""


def pascal(slug: str) -> str:
    return "".join(part.capitalize() for part in slug.replace("_", "-").split("-"))


def fold_nullable(node: Any) -> Any:
    """`anyOf: [{type: T, ...}, {type: null}]` -> `{type: [T, null], ...}` (objects and refs stay unions)."""
    if isinstance(node, list):
        return [fold_nullable(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: fold_nullable(v) for k, v in node.items()}
    alts = out.get("anyOf")
    if isinstance(alts, list) and len(alts) == 2 and {"type": "null"} in alts:
        other = next(a for a in alts if a != {"type": "null"})
        if isinstance(other.get("type"), str) and other["type"] not in ("object", "array"):
            del out["anyOf"]
            out.update({**other, "type": [other["type"], "null"]})
    return out


def name_inline(name: str, schema: dict[str, Any]) -> None:
    """Gives the inline objects below a schema the class names of INLINE_NAMES (as titles)."""
    for prop, sub in (schema.get("properties") or {}).items():
        title = INLINE_NAMES.get((name, prop))
        if title is None:
            continue
        targets = [sub, *(sub.get("anyOf") or [])]
        for target in targets:
            if target.get("type") == "array" and isinstance(target.get("items"), dict):
                target = target["items"]
            if target.get("type") == "object":
                target["title"] = title
                name_inline(title, target)


def prepared(document: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(document)
    schemas = doc["components"]["schemas"]
    slugs = []
    for path, item in doc["paths"].items():
        parts = path.split("/")
        if len(parts) != 4 or parts[1:3] != ["v1", "utilities"] or "{" in parts[3]:
            continue
        slug = parts[3]
        body = item["post"]["requestBody"]["content"]["application/json"]["schema"]
        async_body = doc["paths"][f"{path}/jobs"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        if body["properties"]["input"] != async_body["properties"]["input"]:
            raise SystemExit(f"{slug}: the sync and async routes take different inputs")
        name = f"{pascal(slug)}Input"
        schemas[name] = {**body["properties"]["input"], "title": name}
        slugs.append(slug)
    for name, schema in schemas.items():
        name_inline(name, schema)
    # Only the components: the client's methods are written by hand (src/dutil_client/_client.py).
    doc["paths"] = {}
    doc.pop("webhooks", None)
    doc["components"] = {"schemas": fold_nullable(schemas)}
    doc["x-utilities"] = slugs
    return doc


def generate() -> str:
    document = yaml.safe_load(OPENAPI.read_text())
    doc = prepared(document)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "openapi.json"
        target = Path(tmp) / "models.py"
        import json

        source.write_text(json.dumps(doc))
        subprocess.run(
            [
                str(Path(sys.executable).parent / "datamodel-codegen"),
                "--input",
                str(source),
                "--input-file-type",
                "openapi",
                "--output",
                str(target),
                "--output-model-type",
                "pydantic_v2.BaseModel",
                "--target-python-version",
                "3.10",
                "--use-annotated",
                "--field-constraints",
                "--use-standard-collections",
                "--use-union-operator",
                "--enum-field-as-literal",
                "all",
                "--use-title-as-name",
                "--collapse-root-models",
                "--use-schema-description",
                "--disable-timestamp",
                "--custom-file-header",
                HEADER,
                "--formatters",
                "black",
            ],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        models = target.read_text()
    slugs = doc["x-utilities"]
    literal = ", ".join(f'"{s}"' for s in slugs)
    inputs = "\n".join(f'    "{s}": {pascal(s)}Input,' for s in slugs)
    status = document["components"]["schemas"]["Job"]["properties"]["status"]
    states = ", ".join(f'"{a["const"]}"' for a in status["anyOf"])
    union = " | ".join(f"{pascal(s)}Input" for s in slugs)
    return models.rstrip() + f"""


Utility = Literal[{literal}]
\"\"\"The utilities of this API version (one `/v1/utilities/<slug>` route each).\"\"\"

JobStatus = Literal[{states}]

UtilityInput = {union}

INPUT_MODELS: dict[str, type[BaseModel]] = {{
{inputs}
}}
\"\"\"Each utility's input model.\"\"\"
"""


def main() -> None:
    text = generate()
    if "--check" in sys.argv:
        if TARGET.read_text() != text:
            raise SystemExit(f"{TARGET} is out of date with {OPENAPI}: run `npm run generate`")
        return
    TARGET.write_text(text)


if __name__ == "__main__":
    main()
