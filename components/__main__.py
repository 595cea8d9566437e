"""Serve every public component of the library to Pulumi programs in any language.

The Python language host runs this file from this folder; the folder itself is
the package (``gpu_fungibility`` once installed), so it is loaded under that
name when it is not installed.
"""

import importlib.util
import sys
from pathlib import Path


def _library():
    try:
        import gpu_fungibility
    except ImportError:
        here = Path(__file__).resolve().parent
        spec = importlib.util.spec_from_file_location("gpu_fungibility", here / "__init__.py",
                                                      submodule_search_locations=[str(here)])
        gpu_fungibility = importlib.util.module_from_spec(spec)
        sys.modules["gpu_fungibility"] = gpu_fungibility
        spec.loader.exec_module(gpu_fungibility)
    return gpu_fungibility


if __name__ == "__main__":
    from pulumi.provider.experimental import component_provider_host

    library = _library()
    component_provider_host(components=library.components(), name="gpu-fungibility", version="0.2.0")
