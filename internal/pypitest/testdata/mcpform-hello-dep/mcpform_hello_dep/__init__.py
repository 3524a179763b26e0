"""mcpform-hello-dep: the dependency of mcpform-hello-mcp, so its tree has two packages."""


def greeting(name):
    return "Hello, %s!" % name
