"""Multi-label datasets: one in-memory form and loaders for every format the project meets.

Why a loader of our own: the benchmark files (``../shared/datasets/mlc``) come in
MULAN ARFF + XML, MEKA ARFF (``-C q`` in the relation name), dense and sparse,
with nominal features, escaped quotes in names and labels at either end, and the
search needs them as plain numpy arrays with a 0/1 label matrix. ``liac-arff``
reads them, but slowly (CPU seconds just to parse: bibtex 1.25, HumanPseAAC 1.56,
genbase 1.04). The reader below tokenises lines with ``str`` methods, converts
blocks of columns at once (``map(float)``, one dictionary per distinct nominal
declaration) and keeps all-sparse files in a scipy CSC matrix until the kept
features are densified once; it builds the complete Dataset in 0.66, 0.78 and 0.22
CPU seconds for those three, and about 3 CPU seconds for the whole shared collection.

Every loader returns a :class:`Dataset`:

* ``X`` — float64 features, ``NaN`` = missing. A nominal (or string) attribute is
  stored as its integer *code* (the index of the value in the ARFF declaration, or
  in the sorted distinct values for CSV/arrays/string attributes); its column index
  is listed in ``categorical_features`` and its value names in ``categories``. The
  model imputes and one-hot encodes these itself, so raw ARFF data need no
  preprocessing. Binary nominal attributes (``{0,1}`` in bibtex, enron, medical,
  flags; ``{YES,NO}`` in genbase) are nominal too and are listed; a consumer may
  skip one-hot encoding for features with two categories.
* ``Y`` — int8 0/1 label matrix (n × q).

Rules, applied by every loader (they are what ``../shared/datasets/mlc/README.md``
asks for, plus the decisions it leaves open):

1. **Which columns are labels.** An explicit ``labels=`` argument wins; then a MULAN
   XML file beside the ARFF (``name.xml``, or ``stem.xml`` for ``stem-train*.arff`` /
   ``stem-test*.arff``); then MEKA's ``-C q`` in the relation name (q > 0: the first q
   attributes; q < 0: the last |q|). **The XML overrides ``-C``** (medical.arff still
   carries a stale ``-C 45``).
2. **Label order is the ARFF column order** of the label attributes, not the XML
   order (they differ for yeast, enron, CHD_49, water-quality, langlog, 3sources,
   GpositiveGO). The column order is what MEKA uses for ``-C`` files, so a MULAN file
   and its MEKA twin give the same label matrix; names are in ``label_names``.
3. **Names are unescaped** (``'Swainson\\'s Thrush'`` becomes ``Swainson's Thrush``)
   before they are matched against the XML.
4. **Labels must be 0/1** (nominal ``{0,1}``, numeric 0/1, or nominal
   ``{FALSE,TRUE}``); a missing or other value is a :class:`~gp.errors.DataError`
   naming the file and line.
5. **Identifier columns are dropped**: a nominal or string *feature* whose name looks
   like an identifier (``id``, ``ID``, ``row_id``, ``proteinId``, ``uuid``, …) or whose
   value differs on every row (with at least :data:`ID_MIN_ROWS` rows, no missing
   value), e.g. genbase's ``protein`` (662 values for 662 rows). Their names are
   kept in ``Dataset.dropped_features``. ``drop_ids=False`` keeps them. Numeric
   columns are never dropped. Because the distinct-per-row rule looks at the rows,
   load a train/test pair with :func:`load_split`, which applies the train file's
   decisions (and category codes) to the test file.
6. **Sparse ARFF** (``{index value, ...}``): omitted values are 0, i.e. numeric 0 or
   the *first* declared value of a nominal attribute (Weka's semantics).
7. ``date`` attributes become seconds since the epoch (numeric); ``string``
   attributes are nominal with their sorted distinct values as categories;
   ``relational`` attributes are rejected.
8. **Feature values are finite or missing.** ``?`` (and ``NaN``, Weka's own stored form
   of a missing value) is missing; ``inf``, ``-Infinity`` or a number that overflows
   (``1e400``) is a DataError naming the line, attribute and row
   (:func:`evaluation.data.dataset.refuse_non_finite`; whether a dataset can be *learned*
   from — rows, constant labels — is checked before a search, in :mod:`evaluation.learnable`).

Errors are :class:`gp.errors.DataError` whose message starts with the file name (and
``:line`` where one applies): missing/unreadable/malformed file, a directory, pipe or
device instead of a file, no labels found, a label file that does not match the ARFF,
labels that are not 0/1, infinite feature values, no instances, no features.

The package, one concept per module (the ``_`` modules hold the private helpers of the
public ones beside them; every name importers use is re-exported here):

* :mod:`.dataset` — :class:`Dataset`, and :func:`~.dataset.refuse_non_finite` (rule 8);
* :mod:`.arff` — :func:`load_arff`; its parser in :mod:`._arff`, rule 1 (which columns are
  targets) in :mod:`._labels`;
* :mod:`.delimited` — :func:`load_csv` (CSV, TSV);
* :mod:`.arrays` — :func:`from_arrays` (numpy, pandas, scipy.sparse); conversions in :mod:`._arrays`;
* :mod:`.openml` — :func:`load_openml`;
* :mod:`.dispatch` — :func:`load_dataset` (by extension or ``openml:``), :func:`load_split`,
  :func:`recode_classes`, :func:`load_new_data` (data for a trained model);
* :mod:`.schema` — :class:`FeatureSchema`: the training columns by name and type, and new data aligned to them;
* :mod:`._text` — reading (possibly compressed) text files and tokenising, shared by ARFF and CSV;
* :mod:`._columns` — :func:`~._columns._assemble`, the step every loader ends with (rules 2, 4, 5
  and :data:`ID_MIN_ROWS`).
"""
from __future__ import annotations

from ._columns import ID_MIN_ROWS
from ._labels import _xml_labels  # noqa: F401 - not public; tests/test_data.py imports it from here
from .arff import load_arff
from .arrays import from_arrays
from .dataset import Dataset
from .delimited import load_csv
from .dispatch import load_dataset, load_new_data, load_split, recode_classes
from .openml import load_openml
from .schema import FeatureSchema

__all__ = [
    "Dataset", "FeatureSchema", "ID_MIN_ROWS", "from_arrays", "load_arff", "load_csv", "load_dataset",
    "load_new_data", "load_openml", "load_split", "recode_classes",
]
