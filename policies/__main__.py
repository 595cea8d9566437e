"""Serve the pack: the engine (or policy_gate) runs this and talks gRPC to it.

The pack is a package of its own (relative imports) and depends only on what
requirements.txt installs, the component library included; nothing outside
this folder is put on the path. The folder is loaded as a package under a
private name, so a copy of it runs from anywhere.
"""

import importlib.util
import sys
from pathlib import Path

from pulumi_policy import EnforcementLevel, PolicyPack

PACKAGE = "gpu_fungibility_policy_pack"


def _load_rules():
    folder = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location(PACKAGE, folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{PACKAGE}.rules")


rules = _load_rules()
importlib.import_module(f"{PACKAGE}.runtime").install()  # one decoding per resource and call, see runtime.py
importlib.import_module(f"{PACKAGE}.preview_inputs").install()  # Kubernetes objects' inputs while outputs are unknown
PolicyPack(name=rules.PACK_NAME, enforcement_level=EnforcementLevel.MANDATORY, policies=rules.POLICIES)
