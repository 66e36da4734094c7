"""Task files and industry packs: loading and checking what a call is set up from."""
