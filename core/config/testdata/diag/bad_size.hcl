agent {
  warm_memory = "lots"
}

agent "ops" {
  workspace   = "./ops"
  warm_memory = "2 parsecs"
}

agent "docs" {
  workspace   = "./docs"
  warm_memory = "0GB"
}

agent "review" {
  workspace   = "./review"
  warm_memory = "512MB"
}
