"""The shared layer picker (components/layer_picker.py) in AppTest, without a model: a link's
layer as a number or a name in either language, a layer this page does not have (one line in
the reader's language), and a kept layer that is no longer an option."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def script() -> None:
    import streamlit as st

    from components.i18n import set_language
    from components.layer_picker import layer_picker

    set_language(st.query_params.get("lang"))
    last = int(st.session_state.get("last", 6))
    layer = layer_picker("x_layer", range(last + 1), "Layer",
                         named=st.query_params.get("named") == "1")
    st.write(f"picked {layer}")


def run(**query: str) -> AppTest:
    at = AppTest.from_function(script, default_timeout=30)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def picked(at: AppTest) -> int:
    assert not at.exception, [e.value for e in at.exception]
    return int(next(m.value for m in at.markdown if m.value.startswith("picked")).split()[1])


def test_the_default_is_the_last_layer_and_a_link_picks_one():
    assert picked(run()) == 6
    assert picked(run(x_layer="2")) == 2
    assert picked(run(x_layer="layer 3", named="1")) == 3
    assert picked(run(x_layer="第 4 层", named="1")) == 4        # a link made in Chinese
    assert picked(run(x_layer="4", named="1")) == 4             # a bare number, named slider
    assert not run(x_layer="2").info


def test_a_layer_the_page_lacks_says_so_in_both_languages():
    for bad in ("12", "-1", "layer 9", "<b>x</b>"):
        at = run(x_layer=bad)
        assert picked(at) == 6
        [line] = [i.value for i in at.info]
        assert line.startswith("There is no layer `") and "the layers are `0` to `6`" in line
    at = run(x_layer="12", lang="zh")
    assert picked(at) == 6 and at.info[0].value.startswith("这里没有第 `12` 层")


def test_a_kept_layer_that_is_gone_gives_way_to_the_default():
    at = run()
    at.select_slider(key="x_layer").set_value(5).run()
    assert picked(at) == 5
    at.session_state["last"] = 3           # another model, or a corpus keeping fewer layers
    assert picked(at.run()) == 3


def test_compares_layers_are_the_picker_and_a_bad_one_is_said():
    """/compare's two layer sliders are the shared picker: a layer the model lacks in the link
    gets the same one line as on the other pages, a good one in either spelling is taken."""
    from tests.conftest import assert_clean, open_app
    from tests.test_compare_page import settle

    at = settle(open_app("pages/compare/page.py", a="I sat on the bank of the river.",
                         cmp_section="Neighbours in both", cmp_layer_a="9",
                         cmp_layer_b="第 2 层"))
    assert_clean(at)
    [line] = [i.value for i in at.info if "There is no layer" in i.value]
    assert "`9`" in line and "the layers are `0` to `6`" in line
    assert at.select_slider(key="cmp_layer_a").value == 6
    assert at.select_slider(key="cmp_layer_b").value == 2
