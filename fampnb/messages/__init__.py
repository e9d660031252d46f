"""Message catalogues of ``fampnb.i18n``: one module per language (``en``, ``zh``), each a flat
``MESSAGES`` dict of key -> text with ``{fields}``.  Keys are grouped by prefix (``seed.``,
``doctor.``, ``widget.``, ``plot.``, ``cli.``); every key exists in every language (tested)."""
