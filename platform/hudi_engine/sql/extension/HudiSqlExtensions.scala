/*
 * Spark's side of Hudi's SQL: a parser that asks the Python layer (hudi_engine/sql/jvm_router.py)
 * whether a statement is Hudi's, and a command that runs it there. Every session of the
 * application gets it, including spark.newSession() and Spark Connect sessions, which the Python
 * router cannot reach. It routes and nothing else: parsing has no side effects (Spark Connect
 * parses a statement more than once); a command runs its statement once, when Spark runs it.
 *
 * Built from this source against the pinned pyspark's jars (hudi_engine/sql/jvm_extension.py).
 */
package lakehouse.hudi

import org.apache.spark.sql.{Row, SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.parser.{HybridParameterContext, NamedParameterContext, ParameterContext,
  ParserInterface, PositionalParameterContext}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.classic.{Dataset, SparkSession => ClassicSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.execution.datasources.v2.python.UserDefinedPythonDataSource
import org.apache.spark.sql.types.{DataType, StructType}

/** What the driver's Python process implements (py4j calls it back). */
trait HudiSqlHandler {
  // Each returns a HudiSqlException, made by the Python layer with its message, when it fails.

  /** null: not Hudi's, Spark parses it; "query": a read, planned by [[query]]; anything else is the
   * JSON schema of the rows the statement returns when [[execute]] runs it. */
  def route(session: ClassicSession, sqlText: String): AnyRef

  /** The statement as a Dataset whose plan reads the Hudi tables it names. */
  def query(session: ClassicSession, sqlText: String): AnyRef

  /** Runs the statement: a Dataset of its result rows. */
  def execute(session: ClassicSession, sqlText: String): AnyRef
}

/** The Python layer's registration: its handler and the session-independent `hudi` data source. */
object HudiSql {
  @volatile private var handler: HudiSqlHandler = _
  @volatile private var dataSource: UserDefinedPythonDataSource = _
  // Statements the Python layer hands Spark while it runs one of Hudi's, on this thread: Spark's.
  private val depth = ThreadLocal.withInitial[Integer](() => 0)

  def enter(): Unit = depth.set(depth.get + 1)

  def exit(): Unit = depth.set(depth.get - 1)

  def install(h: HudiSqlHandler, source: UserDefinedPythonDataSource): Unit = {
    handler = h
    dataSource = source
  }

  def uninstall(): Unit = {
    handler = null
    dataSource = null
  }

  def installed: Boolean = handler != null

  /** The handler to ask about a statement parsed on this thread; null when Spark parses it alone. */
  private[hudi] def current: HudiSqlHandler = if (depth.get > 0) null else handler

  private[hudi] def requireHandler(): HudiSqlHandler = {
    val h = handler
    if (h == null) {
      throw new HudiSqlException(
        "Hudi's SQL runs in the Spark driver's Python process, and none is attached to this " +
          "application: start it with `hudictl spark-connect`, or call " +
          "hudi_engine.spark.register(spark) in the driver")
    }
    h
  }

  /** Gives a session the `hudi` data source the Python layer registered (df.write, spark.read),
   * with the filter pushdown its reader takes (as hudi_engine.spark.register does). */
  private[hudi] def prepare(session: SparkSession): Unit = {
    val source = dataSource
    val state = session.asInstanceOf[ClassicSession].sessionState
    if (source != null && !state.dataSourceManager.dataSourceExists("hudi")) {
      state.dataSourceManager.registerDataSource("hudi", source)
      state.conf.setConfString("spark.sql.python.filterPushdown.enabled", "true")
    }
  }

  /** A handler's answer, or what it failed with thrown to the caller (a session, a Connect client). */
  private[hudi] def answer[T](result: AnyRef): T = result match {
    case failure: Throwable => throw failure
    case value => value.asInstanceOf[T]
  }
}

class HudiSqlException(message: String) extends RuntimeException(message)

/** `spark.sql.extensions=lakehouse.hudi.HudiSqlExtensions` */
class HudiSqlExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectParser((session, delegate) => new HudiSqlParser(session, delegate))
    // Built once per session, when its analyzer is: the moment to give it the data source.
    extensions.injectResolutionRule { session =>
      HudiSql.prepare(session)
      PassThrough
    }
  }
}

private object PassThrough extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan
}

class HudiSqlParser(session: SparkSession, delegate: ParserInterface) extends ParserInterface {
  override def parsePlan(sqlText: String): LogicalPlan = {
    val handler = HudiSql.current
    val route: String = if (handler == null) null else HudiSql.answer(handler.route(classic, sqlText))
    route match {
      case null => delegate.parsePlan(sqlText)
      case "query" => HudiSql.answer[Dataset[Row]](handler.query(classic, sqlText)).queryExecution.analyzed
      case schema =>
        val output = DataTypeUtils.toAttributes(DataType.fromJson(schema).asInstanceOf[StructType])
        HudiCommand(sqlText, output)
    }
  }

  // spark.sql(text) comes here, with an empty context when it has no parameters. A statement with
  // parameters is Spark's to bind; Hudi's statements take none.
  override def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan = {
    val parameters = context match {
      case named: NamedParameterContext => named.params.nonEmpty
      case positional: PositionalParameterContext => positional.params.nonEmpty
      case hybrid: HybridParameterContext => hybrid.args.nonEmpty
      case _ => true
    }
    if (parameters) delegate.parsePlanWithParameters(sqlText, context) else parsePlan(sqlText)
  }

  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
    delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)

  private def classic: ClassicSession = session.asInstanceOf[ClassicSession]
}

/** One Hudi statement, run by the Python layer when Spark runs the command (once). */
case class HudiCommand(sqlText: String, override val output: Seq[Attribute]) extends LeafRunnableCommand {
  override def run(session: SparkSession): Seq[Row] =
    HudiSql.answer[Dataset[Row]](HudiSql.requireHandler().execute(session.asInstanceOf[ClassicSession], sqlText))
      .collect().toSeq

  override def simpleString(maxFields: Int): String = s"HudiCommand $sqlText"
}
