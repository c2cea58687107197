"""Hostile: raises with terminal escape sequences (a title change, a screen clear, red)."""


def solution(x):
    raise ValueError("\x1b]0;owned\x07\x1b[2J\x1b[31mall red now")
