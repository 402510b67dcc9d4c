session {
  dm_scope       = "main"
  reset_triggers = ["/new", "/reset", "/fresh"]

  reset {
    mode    = "daily"
    at_hour = 4
  }

  reset_by_type "direct" {
    mode         = "idle"
    idle_minutes = 120
  }

  reset_by_type "thread" {
    mode = "none"
  }
}

queue {
  mode     = "collect"
  cap      = 5
  drop     = "new"
  debounce = "0s"
}

messages {
  response_prefix     = "[{model}]"
  text_limit          = 2000
  chunk_mode          = "newline"
  group_history_limit = 0
  timezone            = "Europe/Berlin"
  streaming           = "off"
  verbose             = true
  hook_timeout        = "2s"
}
