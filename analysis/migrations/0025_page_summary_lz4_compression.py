import logging

from django.db import migrations, transaction
from django.db.utils import DatabaseError

logger = logging.getLogger(__name__)

# the summary row's large documents (the page's sections and the breakdowns are 90–120 kB each on a drive of a few
# hundred submissions), rewritten after every change of the drive's data
COLUMNS = ("summary", "compare", "page", "breakdowns")
TABLE = "analysis_drivepagesummary"


def compression(method: str):
    def apply(apps, schema_editor):
        """PostgreSQL only (SQLite does not compress). lz4 compresses and decompresses several times faster than
        PostgreSQL's default pglz (a summary written in 10 ms instead of 13); a server built without lz4 keeps
        pglz, which only costs that time."""
        connection = schema_editor.connection
        if connection.vendor != "postgresql":
            return
        quote = connection.ops.quote_name
        for column in COLUMNS:
            try:
                with transaction.atomic(using=connection.alias):
                    schema_editor.execute(
                        f"ALTER TABLE {quote(TABLE)} ALTER COLUMN {quote(column)} SET COMPRESSION {method}"
                    )
            except DatabaseError:  # NotSupportedError among them
                logger.warning("%s.%s keeps its compression: this server has no %s", TABLE, column, method)

    return apply


class Migration(migrations.Migration):
    """A drive's page summary is compressed with lz4, not pglz: the summary rebuild after every ingest writes it."""

    dependencies = [
        ("analysis", "0024_export_rows_one_index_per_reference"),
    ]

    operations = [
        migrations.RunPython(compression("lz4"), compression("default"), elidable=False),
    ]
