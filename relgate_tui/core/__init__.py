"""Pure statistics and algorithms (paper 004 and the judge papers). No IO, no Textual, no httpx."""
