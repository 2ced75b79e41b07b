"""The `offline` engine: no network, no key, deterministic — real algorithms, not stubs.

Each step lives in the module that owns its algorithm; this class only routes to them so
the pipelines see one Engine interface whichever engine is configured.
"""
from __future__ import annotations

from .base import Engine


class OfflineEngine(Engine):
    name = "offline"

    def extract_graph(self, units):
        from provrag.extract_offline import extract_units

        return extract_units(units, self.cfg)

    def summarize_descriptions(self, title, descriptions):
        from provrag.extract_offline import summarize

        return summarize(title, descriptions, self.cfg)

    def community_report(self, context):
        from provrag.report_offline import write_report

        return write_report(context, self.cfg)

    def map_points(self, question, reports):
        from provrag.answer_offline import map_points

        return map_points(question, reports, self.cfg)

    def reduce_answer(self, question, points):
        from provrag.answer_offline import reduce_answer

        return reduce_answer(question, points, self.cfg)

    def answer(self, question, context):
        from provrag.answer_offline import answer

        return answer(question, context, self.cfg)

    def judge(self, claim, evidence):
        from provrag.judge import judge

        return judge(claim, evidence, self.cfg)
