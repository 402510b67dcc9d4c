data_dir   = "./data"
plugin_dri = "./bin"

agent {
  comand  = "claude"
  timeout = "5m"
}
