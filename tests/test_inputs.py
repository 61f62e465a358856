"""vetdp.inputs: what a user gives vetdp to read is refused with one line naming the source, the place and the rule."""

import pytest

from vetdp.inputs import MAX_DEPTH, InputError, parse_json, read_json, read_text, require


def test_read_text_non_utf8_names_line_column_and_byte(tmp_path):
    path = tmp_path / "p.json"
    path.write_bytes(b'{"a": 1,\n "b": "\xff"}')
    with pytest.raises(InputError) as info:
        read_text(path, "--params='@p.json'")
    assert str(info.value) == ("--params='@p.json': line 2, column 8: byte 0xff is not UTF-8; the file must be UTF-8 "
                               "text")


@pytest.mark.parametrize("make,rule", [
    (lambda d: d / "missing.json", "cannot read"),
    (lambda d: d, "is a directory"),
])
def test_read_text_missing_or_directory(tmp_path, make, rule):
    with pytest.raises(InputError, match=rule):
        read_text(make(tmp_path), "X")


def test_read_text_larger_than_the_limit_is_refused_before_reading(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("x" * 101)
    with pytest.raises(InputError, match="the file has 101 bytes; at most 100 are read"):
        read_text(path, "X", max_bytes=100)
    assert read_text(path, "X", max_bytes=101) == "x" * 101


@pytest.mark.parametrize("text,rule", [
    ("{bad", "line 1, column 2: Expecting property name enclosed in double quotes (not valid JSON)"),
    ('{"a":\n NaN}', "NaN is not a JSON number"),
    ("[Infinity]", "Infinity is not a JSON number"),
    ('{"prob": ' + "1" * 5000 + "}", "an integer has 5000 digits; at most 4300 are converted"),
    ("[" * 30000 + "]" * 30000, f"nested too deeply (at most {MAX_DEPTH} levels)"),
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"nested too deeply (at most {MAX_DEPTH} levels)"),
], ids=["malformed", "nan", "infinity", "digits", "recursion", "depth"])
def test_parse_json_refuses_what_is_not_plain_json(text, rule):
    with pytest.raises(InputError) as info:
        parse_json(text, "--params=X")
    assert str(info.value).startswith("--params=X: ") and rule in str(info.value) and "\n" not in str(info.value)


def test_parse_json_accepts_the_deepest_allowed_nesting_and_plain_values(tmp_path):
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(deep, "X") is not None
    path = tmp_path / "ok.json"
    path.write_text('{"prob": 0.75, "categories": [1, 2, 3]}')
    assert read_json(path, "X") == {"prob": 0.75, "categories": [1, 2, 3]}


def test_require_names_source_place_and_rule():
    require(True, "X", "k", "must be an int")
    with pytest.raises(InputError, match=r"^--reports='r.json': parameters.h = '2' must be an integer in \[1, 64\]$"):
        require(False, "--reports='r.json'", "parameters.h = '2'", "must be an integer in [1, 64]")
