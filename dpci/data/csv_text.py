"""Reading the text of an uploaded CSV safely: size limits, encodings, binary files mistaken
for CSV, the separator, and parsing every cell as text (no UI; :mod:`dpci.data.upload` builds
on it).

The file is parsed only by ``pandas.read_csv`` (C engine, every cell read as text, no
converters), never evaluated or unpickled; the size is checked before parsing and the row
count is capped while parsing.
"""

from __future__ import annotations

import csv
import io
from collections import Counter

import pandas as pd

from dpci.exceptions import DataValidationError

#: Default maximum number of data rows.
DEFAULT_MAX_ROWS = 1_000_000
#: Default maximum file size in bytes (50 MiB).
DEFAULT_MAX_BYTES = 50 * 2**20
#: Cell values treated as missing (compared after stripping, case-insensitive).
MISSING_TOKENS = frozenset({"", "?", "na", "n/a", "nan", "null", "none", "#n/a"})

_MAGIC = {
    b"PK\x03\x04": "a ZIP archive (for example an Excel .xlsx workbook)",
    b"\x1f\x8b": "a gzip-compressed file",
    b"%PDF": "a PDF document",
    b"\xd0\xcf\x11\xe0": "an old Excel .xls workbook",
}


def _fmt_bytes(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n:,} bytes"


SEPARATORS = (",", ";", "\t", "|")
#: Most columns a file may have: more cannot make useful intervals (the matrices have d^2 noisy entries),
#: and parsing each column costs about a millisecond, so a 100,000-column header is refused at once.
DEFAULT_MAX_COLUMNS = 1_000
EXCERPT = 40  # characters of a cell or a name quoted in a message


def quote(value) -> str:
    """A value from the file quoted in a message: its repr, cut to about EXCERPT characters."""
    text = repr(value)
    return text if len(text) <= EXCERPT else text[: EXCERPT - 4] + "…" + text[-1]


def quote_list(values, most: int = 8) -> str:
    """The first ``most`` values, quoted, and how many more there are."""
    values = list(values)
    shown = ", ".join(quote(v) for v in values[:most])
    return f"[{shown}{f', … ({len(values) - most:,} more)' if len(values) > most else ''}]"


def guess_separator(data: bytes) -> str:
    """The field separator of a CSV: comma, semicolon, tab or vertical bar (spreadsheets set to many
    European locales save CSV files with semicolons).

    ``csv.Sniffer`` reads the first lines (it weighs how consistently each candidate splits them,
    and quoted fields); when it cannot decide, the most frequent candidate in the header line is
    taken (comma on a tie or when none occurs).
    """
    sample = bytes(data[:65536]).decode("utf-8", errors="replace")
    lines = sample.splitlines()[:20]
    if len(lines) > 1:
        try:
            return csv.Sniffer().sniff("\n".join(lines), delimiters="".join(SEPARATORS)).delimiter
        except csv.Error:
            pass
    head = lines[0] if lines else ""
    best = max(SEPARATORS, key=head.count)  # the first of equals, so a tie goes to the comma
    return best if head.count(best) else ","


def _read_bytes(data, max_bytes: int) -> bytes:
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
    elif isinstance(data, str) or hasattr(data, "__fspath__"):
        raise DataValidationError(
            "Pass the file's contents as bytes (e.g. uploaded_file.getvalue()) or an open "
            "binary file object; a string or path is not accepted."
        )
    elif hasattr(data, "read"):
        try:
            raw = data.read(max_bytes + 1)
        except (OSError, ValueError, TypeError) as exc:  # I/O failure of the user's object
            raise DataValidationError(f"The file could not be read ({type(exc).__name__}).") from None
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        if not isinstance(raw, (bytes, bytearray)):
            raise DataValidationError("The file object did not return bytes when read.")
        raw = bytes(raw)
    else:
        raise DataValidationError(
            f"Expected the uploaded file as bytes or a binary file object, got {type(data).__name__}."
        )
    if len(raw) > max_bytes:
        raise DataValidationError(
            f"The file is larger than the limit of {_fmt_bytes(max_bytes)}. Upload a smaller file "
            "(for example a random sample of rows) or raise max_bytes."
        )
    return raw


def _decode(raw: bytes, encoding: str) -> str:
    if not raw.strip():
        raise DataValidationError("The file is empty. Upload a CSV file with a header row and data rows.")
    for magic, what in _MAGIC.items():
        if raw.startswith(magic):
            raise DataValidationError(
                f"The file looks like {what}, not a CSV text file. Export or save it as "
                "'CSV (comma delimited)' with UTF-8 encoding and upload that."
            )
    if b"\x00" in raw[:65536]:
        raise DataValidationError(
            "The file contains NUL bytes, so it is a binary file or UTF-16 text, not a UTF-8 CSV. "
            "Save it as 'CSV UTF-8'."
        )
    try:
        return raw.decode("utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding)
    except UnicodeDecodeError as exc:
        raise DataValidationError(
            f"The file is not valid {encoding} text (undecodable byte at position {exc.start}). "
            "Save it as 'CSV UTF-8', or pass encoding='latin-1' if it is a Latin-1/Windows file."
        ) from None
    except LookupError:
        raise DataValidationError(f"Unknown text encoding {encoding!r}.") from None


def _header(text: str, sep: str) -> list[str]:
    """The header's fields; a quoted field may hold a line break (the first record, not the first line)."""
    try:
        return next(csv.reader(io.StringIO(text.lstrip("\r\n")), delimiter=sep))
    except (csv.Error, StopIteration):
        return []


def _parse(
    data, *, sep: str, encoding: str, max_bytes: int, max_rows: int, max_columns: int = DEFAULT_MAX_COLUMNS
) -> tuple[pd.DataFrame, list[str]]:
    """Bytes -> DataFrame of stripped strings with pd.NA for missing cells (the parse of :mod:`dpci.data.upload`)."""
    if not isinstance(sep, str) or len(sep) != 1:
        raise DataValidationError(f"sep must be a single character, got {sep!r}.")
    text = _decode(_read_bytes(data, max_bytes), encoding)
    notes: list[str] = []
    header = [h.strip() for h in _header(text, sep)]
    if len(header) > max_columns:
        raise DataValidationError(
            f"The file has {len(header):,} columns, more than the {max_columns:,} dpci accepts. Keep the target and "
            "the features you need (private intervals need few features: the paper uses up to 10)."
        )
    dup = sorted(h for h, k in Counter(header).items() if k > 1 and h)  # linear in the width
    if dup:
        raise DataValidationError(
            f"Duplicate column names in the header: {quote_list(dup)}. Rename the columns so each name is unique."
        )
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=sep,
            dtype=str,
            na_filter=False,
            skipinitialspace=True,
            skip_blank_lines=True,
            nrows=max_rows + 1,
            engine="c",
            on_bad_lines="error",
            encoding_errors="strict",
        )
    except pd.errors.EmptyDataError:
        raise DataValidationError(
            "The file has no columns. Upload a CSV file with a header row and data rows."
        ) from None
    except pd.errors.ParserError as exc:
        detail = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
        raise DataValidationError(
            f"The file could not be parsed as CSV with separator {sep!r}: {detail}. Check that every "
            "row has the same number of fields as the header and that quotes are balanced."
        ) from None
    except (ValueError, TypeError, UnicodeError, csv.Error, OverflowError) as exc:
        raise DataValidationError(
            f"The file could not be parsed as CSV ({type(exc).__name__}: {exc}). Save it as a plain "
            "comma-separated UTF-8 file with a header row."
        ) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.shape[1] < 2:
        hint = ""
        for other, label in ((";", "semicolons"), ("\t", "tabs"), ("|", "vertical bars")):
            if other != sep and other in (header[0] if header else ""):
                hint = f" The header contains {label}: try sep={other!r}."
                break
        raise DataValidationError(
            f"Only one column was found ({list(frame.columns)}); a target and at least one feature "
            f"are needed. Check the separator (currently {sep!r}).{hint}"
        )
    if len(frame) > max_rows:
        raise DataValidationError(
            f"The file has more than {max_rows:,} data rows (the limit). Upload a random sample of "
            "rows or raise max_rows."
        )
    if len(frame) == 0:
        raise DataValidationError("The file has a header but no data rows.")
    unnamed = [c for c in frame.columns if c.startswith("Unnamed:")]
    if unnamed:
        notes.append(
            f"Column(s) without a header were named {unnamed}; if one is a row index, leave it out of the features."
        )
    for col in frame.columns:
        s = frame[col].astype(object).str.strip()
        frame[col] = s.mask(s.str.lower().isin(MISSING_TOKENS))
    return frame, notes
