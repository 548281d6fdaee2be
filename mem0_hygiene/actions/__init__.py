"""actions"""
