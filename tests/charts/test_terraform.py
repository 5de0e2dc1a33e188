"""The Terraform module: formatted as ``terraform fmt`` wants (the real binary), every file parsed
(python-hcl2: providers cannot be downloaded here, so no ``terraform init/validate``), variables
described, typed and validated where a user can get them wrong, outputs described, nothing declared
and unused, and the chart values it sets are the umbrella chart's."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import hcl2
import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "terraform"
VALIDATED = {"namespace", "job_namespaces", "operator_replicas", "bucket_name", "oidc_provider_arn"}


def blocks(path: Path, kind: str) -> dict[str, dict]:
    parsed = hcl2.load(path.open())
    return {name.strip('"'): body for entry in parsed.get(kind, []) for name, body in entry.items()}


def test_terraform_fmt_check():
    terraform = shutil.which("terraform")
    assert terraform, "terraform (1.11 on the machines, DESIGN.md) is needed for this check"
    done = subprocess.run([terraform, "fmt", "-check", "-recursive", "-diff", str(MODULE)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize("path", sorted(MODULE.rglob("*.tf")), ids=lambda p: str(p.relative_to(MODULE)))
def test_every_file_parses(path):
    assert hcl2.load(path.open())


def test_variables_are_described_typed_and_validated_and_all_used():
    variables = blocks(MODULE / "variables.tf", "variable")
    for name, body in variables.items():
        assert body.get("description") and body.get("type"), name
    assert VALIDATED <= {n for n, b in variables.items() if b.get("validation")}
    code = "".join(p.read_text() for p in MODULE.glob("*.tf") if p.name != "variables.tf")
    assert {n for n in variables if f"var.{n}" not in code} == set(), "declared and never used"
    assert set(re.findall(r"\bvar\.([a-z_]+)", code)) <= set(variables), "used and never declared"


def test_outputs_are_described():
    for name, body in blocks(MODULE / "outputs.tf", "output").items():
        assert body.get("description"), name


def test_example_passes_only_the_modules_variables():
    variables = blocks(MODULE / "variables.tf", "variable")
    (module,) = hcl2.load((MODULE / "examples" / "aws" / "main.tf").open())["module"]
    body = module['"lakehouse"']
    arguments = set(body) - {"source", "__is_block__"}
    assert arguments <= set(variables) and body["source"].strip('"') == "../.."
    required = {n for n, b in variables.items() if "default" not in b}
    assert required <= arguments


def test_chart_values_set_by_the_module_are_the_umbrellas():
    schema = json.loads((ROOT / "charts" / "hudi-lakehouse" / "values.schema.json").read_text())
    main = (MODULE / "main.tf").read_text()
    values = main[main.index("values = [yamlencode({"):main.index("})]")]
    top = set(re.findall(r'^    "?([a-zA-Z-]+)"?\s+=', values, re.M))
    assert top and top <= set(schema["properties"]), top - set(schema["properties"])
