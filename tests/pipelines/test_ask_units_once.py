"""An ask that opens the index itself (the CLI's) reads each text unit's row from the index once:
retrieval, the answer's context, its citations and the answer check meet the same units again,
and a server's reader keeps them (store/units.KeptUnits); the CLI's own reader now does too."""
from provrag.config import load_config
from provrag.pipelines.ask import run_ask


def test_a_cli_ask_reads_each_unit_row_once(sample_index, unit_fetches):
    read = unit_fetches
    res = run_ask("Who leads the Halcyon commissioning team?", sample_index, load_config(), save=False)
    assert res.citations and res.sources            # answered, cited, checked: units were read
    assert read and len(read) == len(set(read))     # none twice
