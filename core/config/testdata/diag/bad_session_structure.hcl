session {
  reset_triggers = "/new"

  reset {
    mode = "idle"
  }
  reset {
    mode = "daily"
  }

  reset_by_type {
    mode = "none"
  }

  reset_by_type "thread" {
    idle_minutes = 1.5
  }
}

queue {
  cap = "many"
}

messages {
  verbose = "yes"
}

plugin "tg" {
  source = "telegram"
  reset {
    mode = "none"
  }
  reset {
    mode = "none"
  }
  config {
    token = "x"
  }
}
