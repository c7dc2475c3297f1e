"""What every part of bertlib leans on: its texts in three languages, the checks at the door, safe
files, random draws and progress bars.
"""
