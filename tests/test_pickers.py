"""The shared layer picker (components/pickers.py) in AppTest, without a model: a link's
layer as a number or a name in either language, a layer this page does not have (one line in
the reader's language), and a kept layer that is no longer an option."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def script() -> None:
    import streamlit as st

    from components.i18n import set_language
    from components.pickers import layer_picker

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


def kinds_script() -> None:
    import streamlit as st

    from components.i18n import set_language
    from components.pickers import count_axis, head_axis, stage_axis
    from components.picture_switcher import axis_slider

    set_language(st.query_params.get("lang"))
    kind = st.query_params.get("kind")
    if kind == "head":
        axis = head_axis("x_head", range(12), "Head")
    elif kind == "stage":
        axis = stage_axis("x_stage", ["word_embeddings", "sum", "layer_1", "layer_2"], "Stage",
                          default="layer_2")
    else:
        axis = count_axis("x_count", [16, 64, 512], 512, "Positions")
    st.write(f"picked {axis_slider(axis)}")


def run_kind(**query: str) -> AppTest:
    at = AppTest.from_function(kinds_script, default_timeout=30)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def test_every_kind_reads_its_names_in_either_language_and_says_what_it_lacks():
    assert picked(run_kind(kind="head")) == 0
    assert picked(run_kind(kind="head", x_head="head 3")) == 3
    assert picked(run_kind(kind="head", x_head="注意力头 5")) == 5       # a link made in Chinese
    assert picked(run_kind(kind="count")) == 512
    assert picked(run_kind(kind="count", x_count="前 64 个")) == 64
    assert picked(run_kind(kind="count", x_count="first 16", lang="zh")) == 16
    at = run_kind(kind="stage", x_stage="sum")
    assert not at.info and "picked sum" in [m.value for m in at.markdown]
    at = run_kind(kind="stage", x_stage="layer_9")
    [line] = [i.value for i in at.info]
    assert line.startswith("There is no stage `layer_9`") and "Showing `layer_2`" in line
    at = run_kind(kind="head", x_head="head 12", lang="zh")
    [line] = [i.value for i in at.info]
    assert line.startswith("这一层没有注意力头 `head 12`") and "`注意力头 0`" in line
    at = run_kind(kind="count", x_count="first 65")
    [line] = [i.value for i in at.info]
    assert "`first 65`" in line and "`first 16` to `all 512`" in line


def test_a_refused_link_is_said_until_the_slider_moves():
    at = run(x_layer="12")
    assert len(at.info) == 1
    assert len(at.run().info) == 1              # Streamlit dropped it from the address: still said
    at.select_slider(key="x_layer").set_value(4).run()
    assert picked(at) == 4 and not at.info
