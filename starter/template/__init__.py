"""template"""
