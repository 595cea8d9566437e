"""The offline preview diff: what a change to the program or a stack config creates, updates, replaces or deletes.

``python -m plan_diff --stack dev`` (``make diff``) plans the stack at a git ref and in the working tree with
the offline plan, and compares the two plans resource by resource.
"""
