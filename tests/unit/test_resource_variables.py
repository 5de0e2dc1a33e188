"""Variables in resource files (${NAME}, ${NAME:=default}, ${NAME:-default}), replaced as Flux's
post-build substitution replaces them; the jobs' own placeholders pass through untouched."""
import pytest

from hudictl.render import read_documents, substitute


def test_values_defaults_and_the_jobs_placeholders():
    text = "a: ${LAKE:=/tmp/lake}/x\nb: ${DB:-pg://h/db}\nc: ${SET}\nd: ${secret:db/password}\ne: ${env:HOME}"
    assert substitute(text, {"SET": "s", "DB": "pg://real/db"}, "f.yaml") == (
        "a: /tmp/lake/x\nb: pg://real/db\nc: s\nd: ${secret:db/password}\ne: ${env:HOME}")


def test_an_unset_variable_without_default_is_named(tmp_path):
    with pytest.raises(SystemExit, match=r"f.yaml uses \$\{BUCKET\}, which is not set"):
        substitute("basePath: s3a://${BUCKET}/t", {}, "f.yaml")


def test_a_folder_is_its_yaml_files_in_name_order(tmp_path):
    (tmp_path / "b.yaml").write_text("name: ${N:=b}\n")
    (tmp_path / "a.yml").write_text("name: a\n---\nname: a2\n")
    (tmp_path / "notes.txt").write_text("not: read\n")
    assert [doc for _, doc in read_documents([str(tmp_path)], {})] == [{"name": "a"}, {"name": "a2"}, {"name": "b"}]
