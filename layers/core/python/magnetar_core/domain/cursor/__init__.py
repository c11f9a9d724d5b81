"""domain/cursor"""
