"""contextlens: see and measure how a word's vector goes from static to contextual."""
