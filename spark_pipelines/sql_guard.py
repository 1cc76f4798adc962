"""What user SQL a pipeline may run: queries over its own views, nothing that reaches the OS,
the JVM or the catalog.

Spark SQL is more than queries. ``SELECT TRANSFORM(...) USING 'sh -c ...'`` runs a shell
command as the hub's user; ``ADD JAR`` and ``CREATE FUNCTION ... USING JAR`` load code;
``reflect``/``java_method`` call any static Java method; ``csv.`/etc/shadow``` and
``read_files`` read local files; ``INSERT``/``CTAS``/``LOAD DATA``/``SET`` write files or change
settings. A text filter cannot keep up with that grammar, so the statement is parsed by Spark's
own parser (the same one ``spark.sql`` uses) and its *unresolved logical plan* is walked:

- the statement must be a query: every plan node's class is on ``ALLOWED_PLANS`` (commands,
  script transforms, inserts, DDL are not, so they are refused by class, whatever the syntax);
- every table it reads is one of the pipeline's views or a CTE of the statement itself (a
  single-part name, no options): no catalog tables, no ``format.`path``` files;
- every function is a Spark built-in (from Spark's own registry), called by its plain name, and
  not on ``DENIED_FUNCTIONS``; table-valued functions come from ``ALLOWED_TABLE_FUNCTIONS``;
- subqueries, CTE bodies and lambda bodies are walked like the top level.

Where it runs: the hub checks a ``sql`` pipeline when it is defined (``check`` in
``templates/sql.py``, answering 400), and the template checks again right before ``spark.sql``
in the run itself (a definitions file edited on disk gains nothing). The hub parses without a
SparkContext: a JVM gateway with Spark's classes, started on first use and kept for the
process (about 3 s once; ``parser``); a process with a Spark session uses the session's parser.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from spark_pipelines.errors import StatementRefused

_LOGICAL = "org.apache.spark.sql.catalyst.plans.logical."
_ANALYSIS = "org.apache.spark.sql.catalyst.analysis."

ALLOWED_PLANS = frozenset(
    [_LOGICAL + name for name in (
        "Project", "Filter", "Aggregate", "Join", "LateralJoin", "Union", "Intersect", "Except",
        "Distinct", "Deduplicate", "Sort", "GlobalLimit", "LocalLimit", "Offset", "Tail",
        "SubqueryAlias", "UnresolvedWith", "OneRowRelation", "LocalRelation", "Window",
        "WithWindowDefinition", "Generate", "Pivot", "Unpivot", "Sample", "UnresolvedHint",
        "RepartitionByExpression", "Repartition", "RebalancePartitions", "Expand",
    )]
    + [_ANALYSIS + name for name in (
        "UnresolvedRelation", "UnresolvedInlineTable", "UnresolvedHaving",
        "UnresolvedSubqueryColumnAliases", "UnresolvedTableValuedFunction",
        "UnresolvedTVFAliases", "UnresolvedEventTimeWatermark",
    )]
)  # fmt: skip
"""Query building blocks. Anything else (commands, ``ScriptTransformation``, ``InsertInto*``,
``CreateTable*``, ``LoadData``, ``SetCommand``, ``AddJarsCommand``, ``CreateFunction``, ...)
is refused."""

DENIED_FUNCTIONS = {
    "reflect": "calls Java methods",
    "java_method": "calls Java methods",
    "try_reflect": "calls Java methods",
    "from_protobuf": "reads a descriptor file from the local disk",
    "to_protobuf": "reads a descriptor file from the local disk",
    "xpath": "parses XML whose document type may reference local files",
    "from_xml": "parses XML whose document type may reference local files",
    "schema_of_xml": "parses XML whose document type may reference local files",
}
"""Built-ins refused anyway, with the reason given to the user (xpath_* as xpath)."""

ALLOWED_TABLE_FUNCTIONS = frozenset(
    {"range", "explode", "explode_outer", "inline", "inline_outer", "posexplode",
     "posexplode_outer", "stack", "json_tuple", "variant_explode", "variant_explode_outer"}
)  # fmt: skip


def check_statement(statement: str, views: Iterable[str], sql_parser: Any = None) -> None:
    """Raises StatementRefused unless ``statement`` is a query over ``views`` (module doc)."""
    sql_parser = sql_parser if sql_parser is not None else parser()
    try:
        plan = sql_parser.parsePlan(statement)
    except Exception as exc:  # py4j's Py4JJavaError carrying Spark's ParseException
        raise StatementRefused([f"not valid Spark SQL: {_first_line(exc)}"]) from None
    walker = _Walker({v.lower() for v in views}, _builtins())
    walker.plan(plan)
    if walker.reasons:
        raise StatementRefused(list(dict.fromkeys(walker.reasons)))


class _Walker:
    def __init__(self, views: set[str], builtins: frozenset[str]) -> None:
        self.names = set(views)  # views, then each CTE the statement defines
        self.builtins = builtins
        self.reasons: list[str] = []

    def plan(self, node: Any) -> None:
        kind = node.getClass().getName()
        simple = kind.rsplit(".", 1)[-1]
        if kind not in ALLOWED_PLANS:
            self.reasons.append(f"{_describe(simple)} is not allowed: only queries over the views")
            return
        if simple == "UnresolvedWith":
            for pair in _seq(node.cteRelations()):
                self.names.add(str(pair._1()).lower())
        elif simple == "UnresolvedRelation":
            self.relation(node)
        elif simple == "UnresolvedTableValuedFunction":
            name = ".".join(_seq(node.name())).lower()
            if name not in ALLOWED_TABLE_FUNCTIONS:
                self.reasons.append(f"table function {name} is not allowed")
        for expression in _seq(node.expressions()):
            self.expression(expression)
        for child in (*_seq(node.children()), *_seq(node.innerChildren())):
            if _is_plan(child):
                self.plan(child)
            else:
                self.expression(child)

    def relation(self, node: Any) -> None:
        parts = [str(p) for p in _seq(node.multipartIdentifier())]
        name = ".".join(parts)
        if len(parts) != 1 or parts[0].lower() not in self.names:
            known = ", ".join(sorted(self.names)) or "none"
            self.reasons.append(f"table {name} is not one of the pipeline's views ({known})")
        elif not node.options().isEmpty():
            self.reasons.append(f"table {name} may not carry options")

    def expression(self, node: Any) -> None:
        simple = node.getClass().getSimpleName()
        if simple == "UnresolvedFunction":
            self.function([str(p) for p in _seq(node.nameParts())])
        plan = _subquery_plan(node)
        if plan is not None:
            self.plan(plan)
        for child in _seq(node.children()):
            self.expression(child)

    def function(self, parts: list[str]) -> None:
        name = parts[-1].lower()
        qualifier = [p.lower() for p in parts[:-1]]
        if qualifier not in ([], ["builtin"], ["system", "builtin"]):
            self.reasons.append(f"function {'.'.join(parts)} is not a Spark built-in")
            return
        denied = DENIED_FUNCTIONS.get("xpath" if name.startswith("xpath") else name)
        if denied:
            self.reasons.append(f"function {name} is not allowed: it {denied}")
        elif name not in self.builtins:
            self.reasons.append(f"function {name} is not a Spark built-in")


def _describe(simple: str) -> str:
    known = {
        "ScriptTransformation": "TRANSFORM ... USING (runs a program)",
        "AddJarsCommand": "ADD JAR",
        "AddFilesCommand": "ADD FILE",
        "AddArchivesCommand": "ADD ARCHIVE",
        "CreateFunction": "CREATE FUNCTION",
        "CreateFunctionCommand": "CREATE TEMPORARY FUNCTION",
        "LoadData": "LOAD DATA",
        "SetCommand": "SET",
        "InsertIntoDir": "INSERT ... DIRECTORY",
        "InsertIntoStatement": "INSERT",
        "CreateTableAsSelect": "CREATE TABLE ... AS SELECT",
    }
    return known.get(simple, simple)


def _seq(scala: Any) -> list[Any]:
    iterator = scala.iterator()
    out = []
    while iterator.hasNext():
        out.append(iterator.next())
    return out


_LOGICAL_PLAN = _LOGICAL + "LogicalPlan"
_SUBQUERY = "org.apache.spark.sql.catalyst.expressions.SubqueryExpression"
_ancestors: dict[str, frozenset[str]] = {}


def _is_a(node: Any, base: str) -> bool:
    """``node``'s class is ``base`` or extends it (class chains cached by name)."""
    cls = node.getClass()
    name = str(cls.getName())
    chain = _ancestors.get(name)
    if chain is None:
        names = []
        while cls is not None:
            names.append(str(cls.getName()))
            cls = cls.getSuperclass()
        chain = _ancestors[name] = frozenset(names)
    return base in chain


def _is_plan(node: Any) -> bool:
    return _is_a(node, _LOGICAL_PLAN)


def _subquery_plan(node: Any) -> Any:
    """The plan of a subquery expression (EXISTS, IN, scalar, lateral), else None."""
    return node.plan() if _is_a(node, _SUBQUERY) else None


def _first_line(exc: Exception) -> str:
    java = getattr(exc, "java_exception", None)
    text = str(java.getMessage()) if java is not None else str(exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


# -- the parser -------------------------------------------------------------------------------
_lock = threading.Lock()
_gateway_parser: Any = None
_builtin_names: dict[int, frozenset[str]] = {}


def parser() -> Any:
    """Spark's SQL parser: the active session's, else one in a JVM gateway started once."""
    global _gateway_parser
    from pyspark import SparkConf, SparkContext

    with _lock:
        if _gateway_parser is None:
            if SparkContext._jvm is None:  # no gateway in this process yet: a small one
                conf = SparkConf().set("spark.driver.memory", "256m")
                SparkContext._ensure_initialized(conf=conf)
            jvm = SparkContext._jvm
            assert jvm is not None, "pyspark started no JVM gateway"
            _gateway_parser = jvm.org.apache.spark.sql.execution.SparkSqlParser()
        return _gateway_parser


def session_parser(spark: Any) -> Any:
    return spark._jsparkSession.sessionState().sqlParser()


def _builtins() -> frozenset[str]:
    """Names of Spark's built-in functions (one JVM call, cached per JVM)."""
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    assert jvm is not None, "no JVM gateway: parse a statement first"
    key = id(jvm)
    names = _builtin_names.get(key)
    if names is None:
        registry = jvm.org.apache.spark.sql.catalyst.analysis.FunctionRegistry.builtin()
        listed = str(registry.listFunction().mkString(","))
        names = _builtin_names[key] = frozenset(
            n.rsplit(".", 1)[-1].lower() for n in listed.split(",") if n
        )
    return names
