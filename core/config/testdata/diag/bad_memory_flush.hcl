agent {
  memory_flush {
    soft_threshold_tokens = 30000
    reserve_tokens = -5
  }
}
