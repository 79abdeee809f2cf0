"""Host-side tests of the restore merge: what of a saved configuration is
missing from the running one, and what the two disagree on."""

import copy
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from vaai import config

IQN = "iqn.2026-11.org.vaai:t1"
ESX = "iqn.1998-01.com.vmware:esx01"


def saved():
    return {
        "storage_objects": [
            {"plugin": "vaai", "name": "ds1", "path": "/srv/ds1.img", "size": 1 << 30},
            {"plugin": "vaai", "name": "ds2", "path": "/srv/ds2.img", "size": 1 << 30},
        ],
        "fabric_modules": [],
        "targets": [
            {
                "wwn": IQN,
                "fabric": "iscsi",
                "tpgs": [
                    {
                        "tag": 1,
                        "enable": True,
                        "attributes": {"authentication": 0},
                        "luns": [
                            {"index": 0, "storage_object": "/backstores/vaai/ds1"},
                            {"index": 1, "storage_object": "/backstores/vaai/ds2"},
                        ],
                        "portals": [{"ip_address": "0.0.0.0", "port": 3260}],
                        "node_acls": [
                            {
                                "node_wwn": ESX,
                                "chap_userid": "esx",
                                "mapped_luns": [
                                    {"index": 0, "tpg_lun": 0},
                                    {"index": 1, "tpg_lun": 1},
                                ],
                            }
                        ],
                    }
                ],
            }
        ],
    }


def test_nothing_missing_from_itself():
    todo = config.missing(saved(), saved())
    assert todo["storage_objects"] == [] and todo["targets"] == []


def test_everything_missing_from_an_empty_configuration():
    todo = config.missing(saved(), {})
    assert todo["storage_objects"] == saved()["storage_objects"]
    assert todo["targets"] == saved()["targets"]


def test_partial_target_yields_only_its_missing_pieces():
    running = saved()
    tpg = running["targets"][0]["tpgs"][0]
    del tpg["luns"][1]
    tpg["node_acls"][0]["mapped_luns"] = tpg["node_acls"][0]["mapped_luns"][:1]
    tpg["enable"] = False
    running["storage_objects"].pop()
    todo = config.missing(saved(), running)
    assert [so["name"] for so in todo["storage_objects"]] == ["ds2"]
    (t,) = todo["targets"]
    (part,) = t["tpgs"]
    assert [lun["index"] for lun in part["luns"]] == [1]
    assert part["portals"] == []
    # Only the mapping is added; the running ACL's CHAP settings stay.
    assert part["node_acls"] == [{"node_wwn": ESX, "mapped_luns": [{"index": 1, "tpg_lun": 1}]}]
    assert "attributes" not in part and part["enable"] is False


def test_missing_does_not_change_its_inputs():
    a, b = saved(), {}
    config.missing(a, b)
    assert a == saved() and b == {}


def test_a_new_tpg_in_an_existing_target_is_restored_whole():
    want = saved()
    extra = copy.deepcopy(want["targets"][0]["tpgs"][0])
    extra["tag"] = 2
    want["targets"][0]["tpgs"].append(extra)
    (t,) = config.missing(want, saved())["targets"]
    assert t["tpgs"] == [extra]


def test_conflicts_name_a_backstore_on_another_path():
    running = saved()
    running["storage_objects"][0]["path"] = "/elsewhere.img"
    (msg,) = config.conflicts(saved(), running)
    assert "vaai/ds1" in msg and "/elsewhere.img" in msg and "/srv/ds1.img" in msg


def test_conflicts_name_a_lun_bound_to_another_backstore():
    running = saved()
    running["targets"][0]["tpgs"][0]["luns"][0]["storage_object"] = "/backstores/fileio/x"
    (msg,) = config.conflicts(saved(), running)
    assert "LUN 0" in msg and "fileio/x" in msg


def test_no_conflicts_for_the_same_configuration():
    assert config.conflicts(saved(), saved()) == []


@pytest.mark.parametrize(
    "mangle, words",
    [
        (lambda c: c.update(targets={}), "'targets' is not a list"),
        (lambda c: c["storage_objects"][0].pop("plugin"), "storage_objects[0] has no 'plugin'"),
        (lambda c: c["targets"][0]["tpgs"][0]["luns"][1].pop("index"), "luns[1] has no 'index'"),
        (
            lambda c: c["targets"][0]["tpgs"][0]["node_acls"][0]["mapped_luns"].append(3),
            "mapped_luns[2] is not a JSON object",
        ),
    ],
)
def test_shape_problem_names_the_first_bad_entry(mangle, words):
    c = saved()
    mangle(c)
    assert words in config.shape_problem(c)


def test_shape_of_a_good_file_and_of_a_list():
    assert config.shape_problem(saved()) is None
    assert config.shape_problem([]) == "the file is not a JSON object"


def test_load_refuses_missing_and_broken_files(tmp_path):
    with pytest.raises(config.VaaiError, match="does not exist"):
        config.load(str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(config.VaaiError, match=r"not a saveconfig\.json"):
        config.load(str(bad))
