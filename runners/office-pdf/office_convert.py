"""office-pdf's converter: one LibreOffice kept by one Python UNO client.

Started by the runner (runners/office-pdf/office.ts) with Debian's python3 (its `uno` module
speaks LibreOffice's own bridge). It writes the profile's settings (macros never run, no linked
content is fetched), starts soffice headless listening on a pipe of its own, connects, and then
answers one JSON request a line on stdin with one JSON line on stdout, one at a time:

  -> {"input": path, "output": path, "pageRange": str|null, "landscape": bool,
      "pdfVersion": 0|1|2|3, "pdfua": bool, "password": str (a protected doc or xls)}
  <- {"ok": true, "family": "text"|"spreadsheet"|"presentation"|"drawing", "ms": n}
  <- {"ok": false, "reason": "password"|"load"|"export"|"office", "message": str}

The first line it writes is {"ready": true, "startMs": n}. soffice is its child, in the process
group the runner kills as a whole. A reason "office" means LibreOffice is gone or broken: the
runner starts a new one.
"""

import json
import os
import subprocess
import sys
import time

import uno  # noqa: E402 (Debian's python3-uno)
from com.sun.star.beans import PropertyValue

# Three guards keep LibreOffice from fetching what a document links to (images, OLE links, fields,
# linked sheets), each enough alone (runners/office-pdf/office.test.ts turns off the other two):
# - "links": the profile's update modes say never. Writer's Update/Link is 0 never, 1 on request,
#   2 always; Calc's is 0 always, 1 never, 2 on request (their own enums differ).
# - "referer": links from a document loaded without a trusted referer are blocked.
# - "load": every document is loaded with UpdateDocMode NO_UPDATE.
# The converter takes `--guards=links,referer,load` (all of them when not given): only the test
# that shows each guard alone holds names fewer.
GUARDED = {
    "links": [
        ("/org.openoffice.Office.Writer/Content/Update", "Link", "int", ("0", "2")),
        ("/org.openoffice.Office.Writer/Content/Update", "Field", "boolean", ("false", "true")),
        ("/org.openoffice.Office.Calc/Content/Update", "Link", "int", ("1", "0")),
    ],
    "referer": [
        ("/org.openoffice.Office.Common/Security/Scripting", "BlockUntrustedRefererLinks", "boolean", ("true", "false")),
    ],
    "proxy": [
        ("/org.openoffice.Inet/Settings", "ooInetProxyType", "int", ("2", "0")),
        ("/org.openoffice.Inet/Settings", "ooInetNoProxy", "string", ("", "")),
        ("/org.openoffice.Inet/Settings", "ooInetHTTPProxyName", "string", ("127.0.0.1", "")),
        ("/org.openoffice.Inet/Settings", "ooInetHTTPProxyPort", "int", ("9", "0")),
        ("/org.openoffice.Inet/Settings", "ooInetHTTPSProxyName", "string", ("127.0.0.1", "")),
        ("/org.openoffice.Inet/Settings", "ooInetHTTPSProxyPort", "int", ("9", "0")),
        ("/org.openoffice.Inet/Settings", "ooInetFTPProxyName", "string", ("127.0.0.1", "")),
        ("/org.openoffice.Inet/Settings", "ooInetFTPProxyPort", "int", ("9", "0")),
    ],
}
GUARDS = ("links", "referer", "load", "proxy")

# Settings of the profile (registrymodifications.xcu) besides the guards: macros never run,
# whatever the document says; no first-start dialogs, no recovery, no update checks.
SETTINGS = [
    ("/org.openoffice.Office.Common/Security/Scripting", "MacroSecurityLevel", "int", "3"),
    ("/org.openoffice.Office.Common/Security/Scripting", "DisableMacrosExecution", "boolean", "true"),
    ("/org.openoffice.Office.Common/Security/Scripting", "RemovePersonalInfoOnSaving", "boolean", "true"),
    ("/org.openoffice.Office.Common/Misc", "FirstRun", "boolean", "false"),
    ("/org.openoffice.Office.Common/Misc", "UseDocumentSystemFileLocking", "boolean", "false"),
    ("/org.openoffice.Office.Recovery/AutoSave", "Enabled", "boolean", "false"),
    ("/org.openoffice.Office.Recovery/RecoveryInfo", "Enabled", "boolean", "false"),
    ("/org.openoffice.Office.Common/Load", "ShowOfficeUpdateDialog", "boolean", "false"),
    ("/org.openoffice.Office.Common/Save/Document", "LoadPrinter", "boolean", "false"),
]

EXPORT_FILTERS = {
    "text": "writer_pdf_Export",
    "spreadsheet": "calc_pdf_Export",
    "presentation": "impress_pdf_Export",
    "drawing": "draw_pdf_Export",
}

# MacroExecutionMode NEVER_EXECUTE and UpdateDocMode NO_UPDATE, FULL_UPDATE (com.sun.star.document).
NEVER_EXECUTE = 0
NO_UPDATE = 0
FULL_UPDATE = 3


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def profile_settings(guards):
    settings = list(SETTINGS)
    for guard, items in GUARDED.items():
        settings += [(path, name, kind, values[0] if guard in guards else values[1]) for path, name, kind, values in items]
    return settings


def write_settings(profile, guards):
    user = os.path.join(profile, "user")
    os.makedirs(user, exist_ok=True)
    items = "".join(
        f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse"><value>{value}</value></prop></item>\n'
        for path, name, _type, value in profile_settings(guards)
    )
    with open(os.path.join(user, "registrymodifications.xcu"), "w", encoding="utf-8") as f:
        f.write(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
            'xmlns:xs="http://www.w3.org/2001/XMLSchema" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
            f"{items}</oor:items>\n"
        )


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def start_office(soffice, profile, pipe, guards):
    write_settings(profile, guards)
    office = subprocess.Popen(
        [
            soffice,
            "--headless",
            "--invisible",
            "--nologo",
            "--norestore",
            "--nodefault",
            "--nolockcheck",
            "--nofirststartwizard",
            f"-env:UserInstallation={uno.systemPathToFileUrl(profile)}",
            f"--accept=pipe,name={pipe};urp;",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    deadline = time.monotonic() + 60
    while True:
        try:
            ctx = resolver.resolve(f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
            break
        except Exception:  # not listening yet
            if office.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("LibreOffice did not start")
            time.sleep(0.02)
    return office, ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)


def family_of(doc):
    if doc.supportsService("com.sun.star.sheet.SpreadsheetDocument"):
        return "spreadsheet"
    if doc.supportsService("com.sun.star.presentation.PresentationDocument"):
        return "presentation"
    if doc.supportsService("com.sun.star.drawing.DrawingDocument"):
        return "drawing"
    return "text"


def make_landscape(doc):
    """Turns every page style landscape (text documents and spreadsheets; slides keep their own format)."""
    styles = doc.getStyleFamilies().getByName("PageStyles")
    for name in styles.getElementNames():
        style = styles.getByName(name)
        if style.getPropertyValue("IsLandscape"):
            continue
        w = style.getPropertyValue("Width")
        h = style.getPropertyValue("Height")
        style.setPropertyValue("IsLandscape", True)
        if w < h:
            style.setPropertyValue("Width", h)
            style.setPropertyValue("Height", w)


# The export options a request may switch, by LibreOffice's FilterData name.
EXPORT_SWITCHES = {
    "losslessImages": "UseLosslessCompression",
    "exportBookmarks": "ExportBookmarks",
    "exportNotes": "ExportNotes",
    "exportFormFields": "ExportFormFields",
    "singlePageSheets": "SinglePageSheets",
}


def filter_data(req):
    data = []
    if req.get("pageRange"):
        data.append(prop("PageRange", req["pageRange"]))
    if req.get("pdfVersion"):
        data.append(prop("SelectPdfVersion", int(req["pdfVersion"])))
    if req.get("pdfua"):
        data.append(prop("PDFUACompliance", True))
    # Fonts are embedded (PDF/A requires it; the default does it too); images keep their
    # resolution unless a lower one is asked for.
    data.append(prop("EmbedStandardFonts", True))
    if req.get("maxImageResolution"):
        data.append(prop("ReduceImageResolution", True))
        data.append(prop("MaxImageResolution", int(req["maxImageResolution"])))
    else:
        data.append(prop("ReduceImageResolution", False))
    if req.get("imageQuality"):
        data.append(prop("Quality", int(req["imageQuality"])))
    for option, name in EXPORT_SWITCHES.items():
        if option in req:
            data.append(prop(name, bool(req[option])))
    return uno.Any("[]com.sun.star.beans.PropertyValue", tuple(data))


def is_password_error(err):
    text = f"{type(err).__name__} {err}"
    return "Password" in text or "password" in text


def convert(desktop, req, guards):
    started = time.monotonic()
    url = uno.systemPathToFileUrl(req["input"])
    load = (
        prop("Hidden", True),
        prop("ReadOnly", True),
        prop("MacroExecutionMode", NEVER_EXECUTE),
        prop("UpdateDocMode", NO_UPDATE if "load" in guards else FULL_UPDATE),
        prop("RepairPackage", False),
        prop("Silent", True),
    )
    if req.get("password") is not None:
        # LibreOffice decrypts Word and Excel 97-2003 files itself (the runner checked the
        # password first where it can); the password is held by this load only.
        load += (prop("Password", str(req["password"])),)
    if req.get("importFilter"):
        load += (prop("FilterName", req["importFilter"]), prop("FilterOptions", req.get("importOptions", "")))
    try:
        doc = desktop.loadComponentFromURL(url, "_blank", 0, load)
    except Exception as err:  # noqa: BLE001 (any UNO exception: the document is refused)
        if type(err).__name__ in ("DisposedException", "RuntimeException") and "bridge" in str(err).lower():
            raise
        if is_password_error(err):
            return {"ok": False, "reason": "password", "message": "protected by a password"}
        return {"ok": False, "reason": "load", "message": "could not be opened"}
    if doc is None:
        return {"ok": False, "reason": "load", "message": "could not be opened (damaged, or protected by a password)"}
    try:
        family = family_of(doc)
        if req.get("landscape") and family in ("text", "spreadsheet"):
            make_landscape(doc)
        out = uno.systemPathToFileUrl(req["output"])
        try:
            doc.storeToURL(out, (prop("FilterName", EXPORT_FILTERS[family]), prop("FilterData", filter_data(req))))
        except Exception as err:  # noqa: BLE001
            return {"ok": False, "reason": "export", "message": f"could not be converted ({type(err).__name__})"}
        return {"ok": True, "family": family, "ms": round((time.monotonic() - started) * 1000)}
    finally:
        try:
            doc.close(True)
        except Exception:  # noqa: BLE001 (closing a document that failed may fail too)
            pass


def main():
    soffice, profile, pipe = sys.argv[1], sys.argv[2], sys.argv[3]
    guards = set(GUARDS)
    for arg in sys.argv[4:]:
        if arg.startswith("--guards="):
            guards = {g for g in arg[len("--guards="):].split(",") if g in GUARDS}
    started = time.monotonic()
    office, desktop = start_office(soffice, profile, pipe, guards)
    say({"ready": True, "startMs": round((time.monotonic() - started) * 1000)})
    try:
        for line in sys.stdin:
            if len(line) > 65536:
                say({"ok": False, "reason": "office", "message": "request too long"})
                break
            req = json.loads(line)
            try:
                say(convert(desktop, req, guards))
            except Exception as err:  # noqa: BLE001 (the bridge or LibreOffice is gone)
                say({"ok": False, "reason": "office", "message": type(err).__name__})
                break
    finally:
        try:
            desktop.terminate()
        except Exception:  # noqa: BLE001
            pass
        try:
            office.wait(timeout=5)
        except subprocess.TimeoutExpired:
            office.kill()


if __name__ == "__main__":
    main()
