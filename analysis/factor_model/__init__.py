"""The factor model of a drive model's spread (issue 20, "Factors measured, not guessed").

For one drive model and one headline metric: log(metric) on the recorded factors, fitted with statsmodels OLS on
one row per unit (units are the clusters: a unit's runs are averaged in log space first, so a unit tested ten times
is one observation). Each effect is a ratio with a 95 % t interval, its factor's share of the explained variance
(Pratt's product measure), and the units and contributors behind it; a level the other
columns already span is "not separable", a level of one unit is "indicative". `FactorFit.normalized(unit)` is the
unit at the reference conditions, `FactorFit.explain(unit)` the factors that account for its gap. Pure Python and
numpy; scipy and statsmodels are imported on the first fit, so importing this package stays cheap.
docs/methodology.md, "Factor model", describes the choices.
"""

from analysis.factor_model.data import FACTORS, MIN_RECORDED_SHARE, Factor, Run
from analysis.factor_model.model import fit
from analysis.factor_model.results import Effect, Estimate, Explanation, FactorFit, FactorResult

__all__ = [
    "FACTORS", "MIN_RECORDED_SHARE", "Effect", "Estimate", "Explanation", "Factor", "FactorFit", "FactorResult",
    "Run", "fit",
]  # fmt: skip
