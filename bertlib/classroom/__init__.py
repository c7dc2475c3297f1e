"""Exercises and their checks: single answers and implement-it exercises.
"""
