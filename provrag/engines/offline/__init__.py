"""The `offline` engine: no network, no key, deterministic — real algorithms, not stubs.

Each step lives in the module that owns its algorithm; this class only routes to them so
the pipelines see one Engine interface whichever engine is configured.
"""
from __future__ import annotations

from provrag.engines.base import Engine, EngineAnswer
from provrag.results import Verdict


class OfflineEngine(Engine):
    name = "offline"

    def extract_graph(self, units):
        from provrag.engines.offline.extract.units import extract_units

        return extract_units(units, self.cfg)

    def summarize_descriptions(self, title, descriptions):
        from provrag.engines.offline.extract.summarize import summarize

        return summarize(title, descriptions, self.cfg)

    def community_report(self, context):
        from provrag.engines.offline.report import write_report

        return write_report(context, self.cfg)

    def map_points(self, question, reports, terms=None):
        from provrag.engines.offline.answer.mapreduce import map_points

        return map_points(question, reports, self.cfg, idf=(terms.idf or None) if terms else None,
                          qterms=(list(terms.terms) or None) if terms else None)

    def reduce_answer(self, question, points, terms=None):
        from provrag.engines.offline.answer.mapreduce import reduce_answer

        return reduce_answer(question, points, self.cfg, idf=(terms.idf or None) if terms else None)

    def warming(self, task):
        from provrag.engines.offline.warm import warming

        return warming(self.cfg, task)

    @property
    def reads(self) -> bool:
        """The learned reader decides what answers (engines/offline/learned.py), when its weights
        are installed and [search] reader = "learned"."""
        from provrag.engines.offline.learned import reader

        return reader(self.cfg, "answer") is not None

    def answer(self, question, context, terms=None):
        """The best sentences of the context, each citing its record; read by the learned reader
        (answer/reading.py) when it is installed, else ranked with the index-wide idf of the
        question's terms when retrieval found them, else idf within the context."""
        from provrag.engines.offline.answer.compose import answer
        from provrag.engines.offline.learned import describe, reader, unavailable

        details: dict = {}
        model = reader(self.cfg, "answer")
        if model is not None:
            details["model"] = describe(model)
        elif unavailable():
            details["reader_note"] = unavailable()
        text = answer(question, context, self.cfg, idf=(terms.idf or None) if terms else None,
                      qterms=(list(terms.terms) or None) if terms else None, info=details, reader=model,
                      gate=terms.coverage if terms else None, unseen=terms.unseen if terms else None)
        # the records whose sentences the answer quotes whole (one completed from a neighbouring
        # unit lies in both, so it promotes neither)
        used = list(dict.fromkeys(p["record"] for p in details.get("sentences") or [] if p.get("whole")))
        return EngineAnswer(text, records_used=used, details=details, abstained=not details.get("sentences"),
                            confidence=details.get("confidence") if model is not None else None,
                            passage_order=details.get("passage_order") if model is not None else None)

    def judged_by(self) -> dict:
        """The offline judge that judge() uses ("learned" when [verify] judge asks for it and the
        reader loads, else "features") and the claim head that read for it (the reader's name,
        version and weights' digest), or why none did."""
        from provrag.engines.offline.learned import describe, reader, unavailable

        model = reader(self.cfg, "judge")
        kind = "learned" if model is not None else "features"   # as judge() decides: no reader, the features
        if model is None:
            model = reader(self.cfg, "claim head")
        out = {"engine": self.name, "judge": kind}
        if model is not None:
            out["claim_head"] = describe(model)
        elif unavailable():
            out["claim_head_note"] = unavailable()
        return out

    def judge(self, claim, evidence, focus=None):
        """The learned claim head alone (judge/learned.py) when [verify] judge = "learned" and it
        is installed; else the fitted features, with the claim head's reading among them
        (judge/head.py) when their weights use it."""
        from provrag.engines.offline.learned import reader

        model = reader(self.cfg, "judge")
        if model is not None:
            from provrag.engines.offline.judge.learned import judge as learned_judge

            verdicts = learned_judge(claim, evidence, self.cfg.verify, model, focus)
        else:
            from provrag.engines.offline.judge.decide import judge

            verdicts = judge(claim, evidence, self.cfg.verify, focus=focus, reader=reader(self.cfg, "claim head"))
        return [Verdict(v["label"], v["score"], v["reason"], tuple(v["span"])) for v in verdicts]
