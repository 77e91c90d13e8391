"""Renderings of a run report: terminal, Markdown, HTML with charts, lessons, transcripts."""
