# A comment at the top.
server "a" {      # trailing
  command = ["x"] # the argv
  env     = []    # none
  /* block
     comment */
  timeout = "5s"
}
