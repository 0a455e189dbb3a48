#!/bin/sh
# Create a persistent Lustre file system (instance owner only by default).
#DW create_persistent type=lustre capacity=10TiB name=project-lustre
true
