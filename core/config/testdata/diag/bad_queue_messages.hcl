queue {
  mode     = "follow-up"
  cap      = 0
  drop     = "oldest"
  debounce = "-1s"
}

messages {
  text_limit          = 0
  chunk_mode          = "paragraph"
  group_history_limit = -1
  timezone            = "utcc"
  streaming           = "draf"
  hook_timeout        = "0s"
  turn_card           = "always"
  ping_after          = "soon"
  seen_reaction       = "seen it"
}
